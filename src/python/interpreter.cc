#include "python/interpreter.h"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "python/metadata_file.h"
#include "support/subprocess.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

constexpr u64 kMaxProbeOutput = 16 * 1024 * 1024;

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

std::string PythonVersionInfo::full_str() const {
  std::string s = short_str() + "." + std::to_string(micro);
  if (releaselevel != "final" && !releaselevel.empty()) s += releaselevel.substr(0, 1) + std::to_string(serial);
  return s;
}

std::vector<std::string> PythonEnvironment::site_dirs() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& entry : sys_path) {
    // "" (python - and -c put the current directory first) is where the user happens to stand,
    // not part of the environment.
    if (entry.empty()) continue;
    std::error_code ec;
    if (!fs::is_directory(entry, ec)) continue;  // zip files, missing entries
    std::string abs = fs::absolute(entry, ec).lexically_normal().string();
    if (abs.size() > 1 && abs.back() == '/') abs.pop_back();
    if (seen.insert(abs).second) out.push_back(abs);
  }
  return out;
}

std::optional<std::string> installed_environment_python(const std::string& executable) {
  fs::path bin = fs::path(executable).parent_path();
  std::error_code ec;
  // PEP 405: a virtual environment is marked by pyvenv.cfg one level above its bin/; conda
  // marks its environments with conda-meta/.
  bool environment = fs::is_regular_file(bin.parent_path() / "pyvenv.cfg", ec) ||
                     fs::is_directory(bin.parent_path() / "conda-meta", ec);
  std::string python = (bin / "python").string();
  if (environment && is_executable_file(python)) return python;
  return std::nullopt;
}

std::vector<std::string> find_on_path(const std::string& name) {
  std::vector<std::string> out;
  const char* path = std::getenv("PATH");
  std::string_view list = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t pos = 0; pos <= list.size();) {
    size_t colon = list.find(':', pos);
    std::string dir(list.substr(pos, colon == list.npos ? list.npos : colon - pos));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) out.push_back(candidate);
    if (colon == list.npos) break;
    pos = colon + 1;
  }
  return out;
}

std::optional<std::string> default_python(std::string* error) {
  // `python -m envdoctor` names its interpreter; a binary installed into an environment (a
  // wheel's script, or make install PREFIX=venv) examines that environment.
  if (const char* named = std::getenv("ENVDOCTOR_PYTHON"); named && *named) return std::string(named);
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    if (std::optional<std::string> python = installed_environment_python(self.string())) return python;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const char* dir = std::getenv(var);
    if (dir && *dir && is_executable_file(std::string(dir) + "/bin/python")) return std::string(dir) + "/bin/python";
  }
  if (std::vector<std::string> on_path = find_on_path("python3"); !on_path.empty()) return on_path.front();
  if (error) *error = "no Python interpreter found: $VIRTUAL_ENV and $CONDA_PREFIX are unset and PATH has no python3";
  return std::nullopt;
}

const std::string& probe_script() {
  // Python 3.3+. Only the modules `python -` already has at hand, plus json/platform/
  // sysconfig; nothing from the environment under examination is imported.
  static const std::string script = R"PY(
import json, os, platform, sys, sysconfig
if sys.version_info < (3, 3):
    sys.stderr.write('Python %d.%d is too old: envdoctor needs 3.3 or newer\n' % sys.version_info[:2])
    sys.exit(3)
def cv(n):
    return sysconfig.get_config_var(n)
def full(i):
    s = '%d.%d.%d' % (i[0], i[1], i[2])
    if i[3] != 'final':
        s += i[3][0] + str(i[4])
    return s
try:
    libc = os.confstr('CS_GNU_LIBC_VERSION') or ''
except (AttributeError, ValueError, OSError):
    libc = ''
p = sysconfig.get_paths()
ex = sys.executable or ''
d = {
    'executable': ex,
    'real_executable': os.path.realpath(ex) if ex else '',
    'version_info': list(sys.version_info[:5]),
    'prefix': sys.prefix,
    'base_prefix': getattr(sys, 'base_prefix', sys.prefix),
    'exec_prefix': sys.exec_prefix,
    'path': sys.path,
    'paths': dict((k, p.get(k, '')) for k in
                  ('purelib', 'platlib', 'stdlib', 'platstdlib', 'scripts', 'data', 'include')),
    'config': dict((k, cv(k)) for k in
                   ('LIBDIR', 'LDLIBRARY', 'INSTSONAME', 'Py_ENABLE_SHARED', 'EXT_SUFFIX', 'SOABI',
                    'Py_DEBUG', 'WITH_PYMALLOC', 'Py_GIL_DISABLED')),
    'has_refcount': hasattr(sys, 'gettotalrefcount'),
    'platform': sys.platform,
    'machine': platform.machine(),
    'sysconfig_platform': sysconfig.get_platform(),
    'libc': libc,
    'implementation': sys.implementation.name,
    'is_64bit': sys.maxsize > 2 ** 32,
    'markers': {
        'implementation_name': sys.implementation.name,
        'implementation_version': full(sys.implementation.version),
        'os_name': os.name,
        'platform_machine': platform.machine(),
        'platform_python_implementation': platform.python_implementation(),
        'platform_release': platform.release(),
        'platform_system': platform.system(),
        'platform_version': platform.version(),
        'python_full_version': platform.python_version(),
        'python_version': '.'.join(platform.python_version_tuple()[:2]),
        'sys_platform': sys.platform,
    },
}
sys.stdout.write(json.dumps(d))
)PY";
  return script;
}

namespace {

using nlohmann::json;

std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// sysconfig config vars are ints, strings or None; "yes" for a true int.
bool truthy(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (it->is_number_integer()) return it->get<i64>() != 0;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_string()) return !it->get<std::string>().empty() && it->get<std::string>() != "0";
  return false;
}

}  // namespace

std::optional<PythonEnvironment> parse_probe_output(const std::string& text, std::string* error) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    if (error) *error = "the interpreter's answer is not JSON: " + last_line(text.substr(0, 200));
    return std::nullopt;
  }
  PythonEnvironment env;
  env.executed = true;
  env.executable = str_of(j, "executable");
  env.real_executable = str_of(j, "real_executable");
  if (auto vi = j.find("version_info"); vi != j.end() && vi->is_array() && vi->size() == 5) {
    const json& a = *vi;
    if (a[0].is_number_integer()) env.version_info.major = a[0].get<int>();
    if (a[1].is_number_integer()) env.version_info.minor = a[1].get<int>();
    if (a[2].is_number_integer()) env.version_info.micro = a[2].get<int>();
    if (a[3].is_string()) env.version_info.releaselevel = a[3].get<std::string>();
    if (a[4].is_number_integer()) env.version_info.serial = a[4].get<int>();
  }
  if (env.version_info.major == 0) {
    if (error) *error = "the interpreter's answer has no version_info";
    return std::nullopt;
  }
  env.prefix = str_of(j, "prefix");
  env.base_prefix = str_of(j, "base_prefix");
  env.exec_prefix = str_of(j, "exec_prefix");
  if (auto p = j.find("path"); p != j.end() && p->is_array())
    for (const json& e : *p)
      if (e.is_string()) env.sys_path.push_back(e.get<std::string>());
  if (auto p = j.find("paths"); p != j.end() && p->is_object()) {
    env.paths = {str_of(*p, "purelib"), str_of(*p, "platlib"), str_of(*p, "stdlib"), str_of(*p, "platstdlib"),
                 str_of(*p, "scripts"), str_of(*p, "data"),    str_of(*p, "include")};
  }
  json config = j.value("config", json::object());
  if (!config.is_object()) config = json::object();
  env.libdir = str_of(config, "LIBDIR");
  env.ldlibrary = str_of(config, "LDLIBRARY");
  env.instsoname = str_of(config, "INSTSONAME");
  env.py_enable_shared = truthy(config, "Py_ENABLE_SHARED");
  env.ext_suffix = str_of(config, "EXT_SUFFIX");
  env.soabi = str_of(config, "SOABI");
  // packaging.tags._cpython_abis: Py_DEBUG, or when unknown, sys.gettotalrefcount.
  auto debug = config.find("Py_DEBUG");
  env.py_debug =
      (debug == config.end() || debug->is_null()) ? j.value("has_refcount", false) : truthy(config, "Py_DEBUG");
  auto pymalloc = config.find("WITH_PYMALLOC");
  env.with_pymalloc = pymalloc == config.end() || pymalloc->is_null() || truthy(config, "WITH_PYMALLOC");
  env.gil_disabled = truthy(config, "Py_GIL_DISABLED");
  env.sys_platform = str_of(j, "platform");
  env.machine = str_of(j, "machine");
  env.sysconfig_platform = str_of(j, "sysconfig_platform");
  std::string libc = str_of(j, "libc");  // "glibc 2.36"
  if (libc.starts_with("glibc ")) env.glibc_version = libc.substr(6);
  env.implementation = str_of(j, "implementation");
  env.is_32bit = !j.value("is_64bit", true);
  if (auto m = j.find("markers"); m != j.end() && m->is_object())
    for (auto& [k, v] : m->items())
      if (v.is_string()) env.markers[k] = v.get<std::string>();
  return env;
}

std::optional<PythonEnvironment> discover_interpreter(const DiscoverOptions& options, std::string* error) {
  std::string python = options.python;
  if (python.empty()) {
    auto found = default_python(error);
    if (!found) return std::nullopt;
    python = *found;
  }
  // The script goes on stdin (`python -`), not in argv: a program that is not Python then never
  // sees it, and cannot echo it back in an error ("File name too long" from `ls -c SCRIPT`).
  auto result = support::run_process({python, "-"}, options.timeout, kMaxProbeOutput, error, probe_script());
  if (!result) return std::nullopt;
  // Python's own failures (a traceback, "Fatal Python error", the script's "Python 2.7 is too
  // old") name Python; anything else that fails or does not answer is not an interpreter, and
  // what it said (ls: "cannot access '-'") is not repeated.
  // A signal (status 128 and up: the OOM killer, a timeout) says nothing about what it is.
  bool python_spoke = result->err.find("Python") != std::string::npos ||
                      result->err.find("Traceback") != std::string::npos || result->status >= 128;
  std::string not_python = python + " is not a Python interpreter (it did not answer envdoctor's probe";
  if (result->status != 0) {
    if (error) {
      if (!python_spoke) {
        *error = not_python + ": exit status " + std::to_string(result->status) + ")";
      } else {
        *error = python + " exited with status " + std::to_string(result->status);
        std::string why = last_line(result->err);
        if (!why.empty()) *error += ": " + why;
      }
    }
    return std::nullopt;
  }
  std::string parse_error;
  auto env = parse_probe_output(result->out, &parse_error);
  if (!env) {
    if (error) *error = not_python + ")";
    return std::nullopt;
  }
  if (env->executable.empty()) env->executable = python;
  return env;
}

// ---- the no-exec path ----

namespace {

// pyvenv.cfg (PEP 405): "key = value" lines; site.py splits on the first '=' and strips.
std::vector<std::pair<std::string, std::string>> read_pyvenv_cfg(const fs::path& path) {
  std::vector<std::pair<std::string, std::string>> out;
  auto text = read_bounded_file(path, 1 << 20, nullptr);
  if (!text) return out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, eq)));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.emplace_back(key, std::string(trim(std::string_view(line).substr(eq + 1))));
  }
  return out;
}

std::optional<PythonVersionInfo> parse_version_text(std::string_view text) {
  // "3.11.7" (venv) or "3.11.7.final.0" (virtualenv's version_info).
  PythonVersionInfo v;
  std::vector<std::string> parts;
  size_t pos = 0;
  for (;;) {
    size_t dot = text.find('.', pos);
    parts.emplace_back(text.substr(pos, dot == text.npos ? text.npos : dot - pos));
    if (dot == text.npos) break;
    pos = dot + 1;
  }
  if (parts.size() < 2) return std::nullopt;
  try {
    v.major = std::stoi(parts[0]);
    v.minor = std::stoi(parts[1]);
    if (parts.size() > 2) v.micro = std::stoi(parts[2]);
    if (parts.size() > 3) v.releaselevel = parts[3];
    if (parts.size() > 4) v.serial = std::stoi(parts[4]);
  } catch (...) {
    return std::nullopt;
  }
  return v;
}

// The lib/pythonX.Y directories of a prefix.
std::vector<std::string> lib_python_dirs(const fs::path& prefix, const FileRoot& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root.host((prefix / "lib").string()), ec)) {
    std::string n = e.path().filename().string();
    if (n.starts_with("python3.") && e.is_directory(ec)) out.push_back(n.substr(6));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// site.py's addsitedir: each site-packages directory's *.pth files, in name order, add the
// directories they name (relative to the site directory) when those exist; lines starting
// with "import" are code, which the no-exec path does not run.
void add_pth_entries(std::vector<std::string>& sys_path, const FileRoot& root) {
  std::vector<std::string> added;
  std::set<std::string> seen(sys_path.begin(), sys_path.end());
  for (const std::string& dir : sys_path) {
    if (!dir.ends_with("/site-packages")) continue;
    std::vector<fs::path> pth_files;
    std::error_code ec;
    // Under a root the directory is read below it; the .pth files' names stay in-root.
    std::string host_dir = root.host(dir);
    for (fs::directory_iterator it(host_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".pth" && !it->path().filename().string().starts_with("."))
        pth_files.push_back(it->path());
    std::sort(pth_files.begin(), pth_files.end());
    for (const fs::path& pth : pth_files) {
      auto text = read_bounded_file(pth, 1 << 20, nullptr);
      if (!text) continue;
      std::istringstream in(*text);
      for (std::string line; std::getline(in, line);) {
        std::string_view entry = trim(line);
        if (entry.empty() || entry.front() == '#' || entry.starts_with("import ") || entry.starts_with("import\t"))
          continue;
        std::string path = fs::path(dir) / entry;
        path = fs::path(path).lexically_normal().string();
        if (path.size() > 1 && path.back() == '/') path.pop_back();
        if (fs::is_directory(root.host(path), ec) && seen.insert(path).second) added.push_back(path);
      }
    }
  }
  sys_path.insert(sys_path.end(), added.begin(), added.end());
}

void fill_layout(PythonEnvironment& env, const FileRoot& root) {
  std::string xy = env.version_info.short_str();
  std::string nodot = std::to_string(env.version_info.major) + std::to_string(env.version_info.minor);
  std::string lib = "/lib/python" + xy;
  env.paths.stdlib = env.paths.platstdlib = env.base_prefix + lib;
  env.paths.purelib = env.paths.platlib = env.prefix + lib + "/site-packages";
  env.paths.scripts = env.prefix + "/bin";
  env.paths.data = env.prefix;
  env.paths.include = env.base_prefix + "/include/python" + xy;
  env.sys_path = {env.base_prefix + "/lib/python" + nodot + ".zip", env.base_prefix + lib,
                  env.base_prefix + lib + "/lib-dynload", env.paths.purelib};
  if (env.in_venv() && env.include_system_site_packages)
    env.sys_path.push_back(env.base_prefix + lib + "/site-packages");
  add_pth_entries(env.sys_path, root);
  env.libdir = env.base_prefix + "/lib";
  env.ldlibrary = "libpython" + xy + ".so";
  env.instsoname = "libpython" + xy + ".so.1.0";
  std::error_code ec;
  env.py_enable_shared = fs::exists(root.host(env.libdir + "/" + env.instsoname), ec);
  if (!env.py_enable_shared) env.ldlibrary = "libpython" + xy + ".a";
  if (!env.py_enable_shared) env.instsoname.clear();
}

void fill_platform(PythonEnvironment& env) {
  struct utsname u;
  if (::uname(&u) != 0) std::memset(&u, 0, sizeof(u));
  env.sys_platform = "linux";
  env.machine = u.machine;
  env.sysconfig_platform = "linux-" + env.machine;
  env.glibc_version = gnu_get_libc_version();
  env.implementation = "cpython";
  env.with_pymalloc = true;
  std::string nodot = std::to_string(env.version_info.major) + std::to_string(env.version_info.minor);
  env.soabi = "cpython-" + nodot + "-" + env.machine + "-linux-gnu";
  env.ext_suffix = "." + env.soabi + ".so";
  std::string full = env.version_info.full_str();
  env.markers = {{"implementation_name", "cpython"},
                 {"implementation_version", full},
                 {"os_name", "posix"},
                 {"platform_machine", env.machine},
                 {"platform_python_implementation", "CPython"},
                 {"platform_release", u.release},
                 {"platform_system", "Linux"},
                 {"platform_version", u.version},
                 {"python_full_version", full},
                 {"python_version", env.version_info.short_str()},
                 {"sys_platform", "linux"}};
}

// The interpreter of a prefix read without running it: bin/python or bin/python3. Under a
// root (a container, whose venv may link to a base interpreter by an absolute path that only
// means something inside it), also bin/pythonX.Y and then pyvenv.cfg's home, where PEP 405
// says the base interpreter lives.
std::string find_executable(const PythonEnvironment& env, const FileRoot& root) {
  std::vector<std::string> candidates = {env.prefix + "/bin/python", env.prefix + "/bin/python3"};
  if (!root.empty()) {
    std::string xy = "python" + env.version_info.short_str();
    candidates.push_back(env.prefix + "/bin/" + xy);
    if (!env.pyvenv_home.empty())
      for (const std::string& name : {xy, std::string("python3"), std::string("python")})
        candidates.push_back((fs::path(env.pyvenv_home) / name).lexically_normal().string());
  }
  for (const std::string& c : candidates)
    if (is_executable_file(root.host(c))) return c;
  return "";
}

}  // namespace

std::optional<PythonEnvironment> environment_from_prefix(const std::string& prefix_arg, std::string* error,
                                                         const FileRoot& root) {
  auto fail = [&](const std::string& what) -> std::optional<PythonEnvironment> {
    if (error) *error = what;
    return std::nullopt;
  };
  std::error_code ec;
  if (!root.empty() && !fs::path(prefix_arg).is_absolute())
    return fail(prefix_arg + ": with --root, --prefix is the environment's absolute path inside the root");
  fs::path prefix = fs::absolute(prefix_arg, ec).lexically_normal();
  if (prefix.has_filename() == false && prefix.has_parent_path()) prefix = prefix.parent_path();
  if (!fs::is_directory(root.host(prefix.string()), ec))
    return fail(prefix_arg + ": not a directory" + (root.empty() ? "" : " inside " + root.dir()));
  PythonEnvironment env;
  env.prefix = env.exec_prefix = env.base_prefix = prefix.string();
  std::optional<PythonVersionInfo> version;
  fs::path cfg = root.host((prefix / "pyvenv.cfg").string());
  if (fs::exists(cfg, ec)) {
    for (const auto& [key, value] : read_pyvenv_cfg(cfg)) {
      if (key == "home") env.pyvenv_home = value;
      else if (key == "include-system-site-packages") env.include_system_site_packages = value == "true";
      else if ((key == "version" || key == "version_info") && !version) version = parse_version_text(value);
    }
    // home is the directory of the base interpreter (PEP 405); its parent is base_prefix.
    if (!env.pyvenv_home.empty()) env.base_prefix = fs::path(env.pyvenv_home).lexically_normal().parent_path().string();
  }
  if (!version) {
    std::vector<std::string> libs = lib_python_dirs(prefix, root);
    if (libs.empty()) return fail(prefix.string() + ": no pyvenv.cfg version and no lib/python3.X directory");
    if (libs.size() > 1)
      return fail(prefix.string() + ": several lib/python3.X directories and no pyvenv.cfg to choose");
    version = parse_version_text(libs.front());
    if (!version) return fail(prefix.string() + ": cannot read the version of lib/python" + libs.front());
  }
  env.version_info = *version;
  env.executable = find_executable(env, root);
  if (!env.executable.empty())
    env.real_executable =
        root.empty() ? fs::weakly_canonical(env.executable, ec).string() : root.canonical(env.executable);
  fill_layout(env, root);
  fill_platform(env);
  return env;
}

}  // namespace envdoctor::python
