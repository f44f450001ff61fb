#include "environment/surroundings.h"

#include <filesystem>
#include <string_view>

#include "python/metadata_file.h"
#include "support/text.h"

namespace envdoctor::environment {

namespace fs = std::filesystem;

namespace {

// docker's default PATH, which a container whose configuration sets none runs with.
constexpr const char* kContainerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

}  // namespace

void name_other_environments(Environment& env, const std::string& root_arg) {
  if (env.root.empty()) return;
  std::string path = env.image ? env.image->env_value("PATH").value_or(kContainerPath) : kContainerPath;
  env.other_environments = python::find_other_environments(env.root, path, env.python.prefix);
  std::string where =
      env.image ? "--image " + python::shell_quoted(env.image->reference) : "--root " + python::shell_quoted(root_arg);
  for (python::OtherEnvironment& other : env.other_environments)
    other.command = "envdoctor check " + where + " --prefix " + python::shell_quoted(other.prefix);
}

namespace {

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

}  // namespace

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

}  // namespace envdoctor::environment
