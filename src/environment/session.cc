#include "environment/session.h"

#include <cstdlib>
#include <filesystem>

#include "image/image.h"
#include "python/metadata_file.h"
#include "support/root.h"
#include "support/text.h"

namespace envdoctor::environment {

namespace {

namespace fs = std::filesystem;

bool fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

// The options make sense together, or say why not.
bool validate(const EnvironmentRequest& r, std::string* error) {
  if (!r.loader.root.empty()) {
    std::error_code ec;
    if (!fs::is_directory(r.loader.root, ec)) return fail(error, "--root " + r.loader.root + ": not a directory");
    if (r.prefix.empty())
      return fail(error,
                  "--root needs --prefix DIR, the environment's path inside the root "
                  "(a container's interpreter cannot be run here)");
    if (!r.python.empty())
      return fail(error, "--root reads the environment without running it: use --prefix, not --python");
  }
  if (r.python.find('/') != std::string::npos) {  // a bare name is a file here or on PATH (python_argument)
    std::error_code ec;
    fs::file_status st = fs::status(r.python, ec);
    if (st.type() == fs::file_type::not_found) return fail(error, "--python " + r.python + ": no such file");
    if (fs::is_directory(st))  // not an environment: python_argument took those
      return fail(error, "--python " + r.python + " is a directory with no bin/python: use --prefix " + r.python +
                             " to read it without running anything");
  }
  if (r.no_exec && r.prefix.empty())
    return fail(error, "--no-exec needs --prefix DIR (the environment to read without running it)");
  return true;
}

// --python as pip takes it (pip/_internal/cli/main_parser.py, identify_python_interpreter): a
// path that exists is used as it is, an environment's directory (a venv, a conda prefix) by its
// bin/python; a bare name that names no file here is looked up on PATH, as a shell would.
std::string python_argument(const std::string& python) {
  std::error_code ec;
  fs::file_status st = fs::status(python, ec);
  if (python.empty() || st.type() == fs::file_type::not_found) return python;
  if (fs::is_directory(st)) {
    std::string bin = (fs::path(python) / "bin" / "python").string();
    return fs::exists(bin, ec) ? bin : python;
  }
  return python.find('/') == std::string::npos ? "./" + python : python;
}

// --image: the request turned into the --root request of the image's composed root, with the
// interpreter the image would run.
std::optional<image::ImageFacts> open_image_request(EnvironmentRequest& request, std::string* error) {
  if (!request.loader.root.empty()) {
    *error = "--image and --root both name the container's root: give one";
    return std::nullopt;
  }
  image::ImageOptions options;
  options.python = request.python;
  options.prefix = request.prefix;
  std::optional<image::OpenedImage> opened = image::open_image(request.loader.image, options, error);
  if (!opened) return std::nullopt;
  request.loader.root = opened->root;
  request.prefix = opened->facts.prefix;
  request.python.clear();
  request.no_exec = true;
  if (!request.loader.ld_library_path)
    request.loader.ld_library_path = opened->facts.env_value("LD_LIBRARY_PATH").value_or("");
  // The container's processes preload what its Env names, not what this shell does.
  request.loader.ld_preload = opened->facts.env_value("LD_PRELOAD").value_or("");
  return std::move(opened->facts);
}

// docker's default PATH, which a container whose configuration sets none runs with.
constexpr const char* kContainerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Under a root or image, its other environments, each with the command that checks it: only the
// one chosen is checked, and a broken module in another is never left out without a word.
void name_other_environments(Environment& env, const std::string& root_arg) {
  if (env.root.empty()) return;
  std::string path = env.image ? env.image->env_value("PATH").value_or(kContainerPath) : kContainerPath;
  env.other_environments = python::find_other_environments(env.root, path, env.python.prefix);
  std::string where =
      env.image ? "--image " + python::shell_quoted(env.image->reference) : "--root " + python::shell_quoted(root_arg);
  for (python::OtherEnvironment& other : env.other_environments)
    other.command = "envdoctor check " + where + " --prefix " + python::shell_quoted(other.prefix);
}

// Whether what a .pth import line does at start is in the model without running it: an editable
// install's finder, whose mapping python/editable.h reads (the line imports the finder module that
// a distribution's import roots came from); setuptools' distutils-precedence.pth, whose shim only
// decides which copy of the pure-Python distutils `import distutils` finds; virtualenv's own.
bool modelled(const python::SiteCode& c, const Environment& env) {
  fs::path pth(c.file);
  if (pth.filename() == "distutils-precedence.pth" && c.text.find("_distutils_hack") != std::string::npos) return true;
  // virtualenv's own (tox, hatch, poetry, pipx, nox make their venvs with it): `import
  // _virtualenv`, whose module patches distutils' and setuptools' install schemes for the venv.
  if (pth.filename() == "_virtualenv.pth" && c.text == "import _virtualenv") return true;
  std::string_view text = c.text;
  size_t start = text.find_first_not_of(" \t", text.find("import") + 6);
  if (!text.starts_with("import") || start == std::string_view::npos) return false;
  size_t end = text.find_first_of(" \t;,", start);
  std::string finder = (pth.parent_path() / (std::string(text.substr(start, end - start)) + ".py")).string();
  for (const python::Distribution& d : env.inventory.distributions)
    for (const python::ImportRoot& root : d.editable_roots)
      if (root.via == finder) return true;
  return false;
}

// Debian's and Ubuntu's own sitecustomize (/etc/python3.X/sitecustomize.py, which
// /usr/lib/python3.X/sitecustomize.py links to), as the python3.X package ships it: it installs
// apport's exception hook when apport is there, and adds no path and no finder.
constexpr std::string_view kDebianSitecustomize =
    "# install the apport exception handler if available\n"
    "try:\n"
    "    import apport_python_hook\n"
    "except ImportError:\n"
    "    pass\n"
    "else:\n"
    "    apport_python_hook.install()\n";

bool is_debians_sitecustomize(const python::SiteCode& c, const Environment& env) {
  std::optional<std::string> text = python::read_bounded_file(env.host(c.file), 4096, nullptr);
  return text && *text == kDebianSitecustomize;
}

// What site.py would have run at start and envdoctor did not, as one note: the .pth files'
// import lines and the customize modules, but those whose effect the model has.
void note_site_code_not_run(Environment& env) {
  const std::vector<python::SiteCode>& code = env.python.site_code_not_run;
  std::vector<std::string> lines, modules;
  for (const python::SiteCode& c : code) {
    if (c.line ? modelled(c, env) : is_debians_sitecustomize(c, env)) continue;
    if (c.line) lines.push_back(c.file + ":" + std::to_string(c.line));
    else modules.push_back(c.text + " (" + c.file + ")");
  }
  if (lines.empty() && modules.empty()) return;
  std::string what;
  if (!lines.empty())
    what = std::to_string(lines.size()) + (lines.size() == 1 ? " import line" : " import lines") + " of .pth files (" +
           support::join_some(lines) + ")";
  if (!modules.empty()) what += (what.empty() ? "" : " and ") + support::join(modules, ", ");
  env.problems.push_back(
      "not run, as envdoctor runs none of the environment's code: " + what +
      "; what this code does at Python's start (a path it adds, an import finder it installs) is not "
      "in the model");
}

// NVIDIA's tables, then the node they judge (a --gpu is held to them), then the knowledge tables.
bool load_tables_and_node(const EnvironmentRequest& request, Session& s, std::string* error) {
  auto tables = cuda::load_cuda_tables(cuda::default_data_dir(), error);
  if (!tables) return false;
  s.tables = std::move(*tables);
  if (request.node_read) {
    s.node = *request.node_read;
  } else if (request.node) {
    std::optional<Node> node = read_node(*request.node, s.tables, error);
    if (!node) return false;
    s.node = std::move(*node);
  }
  auto knowledge = Knowledge::load(cuda::default_data_dir(), error);
  if (!knowledge) return false;
  s.knowledge = std::move(*knowledge);
  return true;
}

}  // namespace

std::optional<Session> open_session(EnvironmentRequest request, std::string* error) {
  Session s;
  if (!load_tables_and_node(request, s, error)) return std::nullopt;
  // The node's driver is the one an image starts on as a GPU container.
  if (!request.loader.image.empty()) request.loader.gpu_container_driver = s.node.driver;
  s.request = request;
  if (request.node) s.request.node_read = s.node;
  s.keep_until_exit = request.keep_until_exit;
  std::optional<image::ImageFacts> image_facts;
  if (!request.loader.image.empty() && !(image_facts = open_image_request(request, error))) return std::nullopt;
  request.python = python_argument(request.python);
  if (!validate(request, error)) return std::nullopt;
  support::FileRoot file_root(request.loader.root);
  EnvironmentOptions options;
  options.python = request.python;
  options.prefix = file_root.inside(request.prefix);
  options.root = file_root.dir();
  options.ld_library_path = request.loader.ld_library_path;
  options.ld_preload = request.loader.ld_preload;
  options.glibc_tunables = request.loader.glibc_tunables;
  if (image_facts) options.gpu_container_driver = request.loader.gpu_container_driver;
  s.env = build_environment(options, error);
  if (!s.env) return std::nullopt;
  if (image_facts)
    for (const std::string& p : image_facts->problems) s.env->problems.push_back("--image: " + p);
  s.env->image = std::move(image_facts);
  name_other_environments(*s.env, file_root.dir());
  note_site_code_not_run(*s.env);
  // The toolkit mounts the driver libraries of the capabilities the image's environment asks for.
  if (s.env->gpu_container && s.env->image)
    s.env->gpu_container->capabilities = image::driver_capabilities(*s.env->image);
  return s;
}

void inherit_process_loader(LoaderOptions& loader) {
  if (!loader.root.empty() || !loader.image.empty()) return;
  if (!loader.ld_library_path)
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) loader.ld_library_path = env;
  // The Python that users start from this shell inherits GLIBC_TUNABLES, which sizes its static TLS.
  if (const char* env = std::getenv("GLIBC_TUNABLES")) loader.glibc_tunables = env;
  // And LD_PRELOAD, whose objects ld.so loads before everything else (loader/preload.h).
  if (const char* env = std::getenv("LD_PRELOAD")) loader.ld_preload = env;
}

}  // namespace envdoctor::environment
