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
  options.image = std::move(image_facts);
  s.env = build_environment(std::move(options), error);
  if (!s.env) return std::nullopt;
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
