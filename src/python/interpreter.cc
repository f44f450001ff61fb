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
#include "python/site_layout.h"
#include "support/input_log.h"
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

namespace {

// Python 3.3+, run with -S: site.py's main() is called here with its addsitedir recording the
// directories it would add and its customize steps removed, so that no .pth line and no
// sitecustomize of the environment runs (the .pth files are read in site_layout.cc). The
// probe's own imports come from the interpreter's library alone: the current directory and
// PYTHONPATH, where a json.py of the environment's would run, are off sys.path meanwhile.
constexpr const char* kProbeScript = R"PY(
import sys
if sys.version_info < (3, 3):
    sys.stderr.write('Python %d.%d is too old: envdoctor needs 3.3 or newer\n' % sys.version_info[:2])
    sys.exit(3)
import os
n0 = 0 if getattr(sys.flags, 'safe_path', False) else 1
path0, initial = sys.path[:n0], sys.path[n0:]
pp = [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]
theirs = set(pp) | set(os.path.abspath(p) for p in pp)
sys.path[:] = [p for p in initial if p and p not in theirs]
import json, platform, site
site_dirs = []
def record(sitedir, known_paths=None):
    site_dirs.append(sitedir)
    return known_paths
def skip():
    pass
site.addsitedir = record
site.execsitecustomize = site.execusercustomize = site.enablerlcompleter = skip
site.main()
import sysconfig
seen, path = set(), []
for e in initial:
    e, case = site.makepath(e)
    if case not in seen:
        seen.add(case)
        path.append(e)
sys.path[:] = path0 + path
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
inputs = set()
for m in list(sys.modules.values()):
    for a in ('__file__', '__cached__'):
        f = getattr(m, a, None)
        if f:
            inputs.add(f)
for f in (getattr(site, 'USER_SITE', None), getattr(site, 'USER_BASE', None)):
    if f:
        inputs.add(f)
d = {
    'inputs': sorted(inputs),
    'executable': ex,
    'real_executable': os.path.realpath(ex) if ex else '',
    'version_info': list(sys.version_info[:5]),
    'prefix': sys.prefix,
    'base_prefix': getattr(sys, 'base_prefix', sys.prefix),
    'exec_prefix': sys.exec_prefix,
    'path0': path0,
    'path': path,
    'site_dirs': site_dirs,
    'user_site': bool(site.ENABLE_USER_SITE),
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

}  // namespace

const std::string& probe_script() {
  static const std::string script = kProbeScript;
  return script;
}

namespace {

using nlohmann::json;

std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A boolean of the probe's output; `otherwise` when absent or not a boolean (a program that is not
// the probe may print anything).
bool bool_of(const json& j, const char* key, bool otherwise) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

std::vector<std::string> strings_of(const json& j, const char* key) {
  std::vector<std::string> out;
  if (auto a = j.find(key); a != j.end() && a->is_array())
    for (const json& e : *a)
      if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
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
  env.sys_path = strings_of(j, "path");
  if (auto dirs = j.find("site_dirs"); dirs != j.end() && dirs->is_array()) {
    // What site.py would add, read here (site_layout.h); path0 ("" for `python -`) stays first.
    bool user_site = bool_of(j, "user_site", false);
    SitePath site = add_site_dirs(env.sys_path, strings_of(j, "site_dirs"),
                                  {env.version_info.major, env.version_info.minor, env.version_info.micro});
    env.site_code_not_run = std::move(site.not_run);
    for (SiteCode& module : customize_modules(site.sys_path, user_site))
      env.site_code_not_run.push_back(std::move(module));
    env.sys_path = strings_of(j, "path0");
    env.sys_path.insert(env.sys_path.end(), site.sys_path.begin(), site.sys_path.end());
  }
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
      (debug == config.end() || debug->is_null()) ? bool_of(j, "has_refcount", false) : truthy(config, "Py_DEBUG");
  auto pymalloc = config.find("WITH_PYMALLOC");
  env.with_pymalloc = pymalloc == config.end() || pymalloc->is_null() || truthy(config, "WITH_PYMALLOC");
  env.gil_disabled = truthy(config, "Py_GIL_DISABLED");
  env.sys_platform = str_of(j, "platform");
  env.machine = str_of(j, "machine");
  env.sysconfig_platform = str_of(j, "sysconfig_platform");
  std::string libc = str_of(j, "libc");  // "glibc 2.36"
  if (libc.starts_with("glibc ")) env.glibc_version = libc.substr(6);
  env.implementation = str_of(j, "implementation");
  env.is_32bit = !bool_of(j, "is_64bit", true);
  if (auto m = j.find("markers"); m != j.end() && m->is_object())
    for (auto& [k, v] : m->items())
      if (v.is_string()) env.markers[k] = v.get<std::string>();
  return env;
}

namespace {

// What the probe's interpreter read, for the input log (support/input_log.h), which does not see
// a child's reads: the program run and every link to it, the directories where its start looks
// for pyvenv.cfg and its landmarks, the pyvenv.cfg files, every module it imported (the probe
// says which), sys.path, the site and library directories, the user's site directory and
// libpython.
void note_probe_inputs(const std::string& python, const std::string& probe_output, const PythonEnvironment& env) {
  auto note_dir_and_parent = [](const std::string& file) {
    fs::path dir = fs::path(file).parent_path();
    for (const fs::path& d : {dir, dir.parent_path()}) {
      support::note_input(d.c_str());
      support::note_input((d / "pyvenv.cfg").c_str());
    }
  };
  for (const std::string& exe : {python, env.executable, env.real_executable}) {
    if (exe.empty()) continue;
    support::note_resolution(exe.c_str());
    note_dir_and_parent(exe);
  }
  json j = json::parse(probe_output, nullptr, /*allow_exceptions=*/false);
  for (const std::string& file : strings_of(j, "inputs")) support::note_resolution(file.c_str());
  for (const std::string& entry : env.sys_path)
    if (!entry.empty()) support::note_resolution(entry.c_str());
  for (const std::string& dir : env.site_dirs()) support::note_resolution(dir.c_str());
  for (const std::string* dir : {&env.paths.stdlib, &env.paths.platstdlib, &env.paths.purelib, &env.paths.platlib})
    if (!dir->empty()) support::note_resolution(dir->c_str());
  if (!env.libdir.empty() && !env.instsoname.empty())
    support::note_resolution((env.libdir + "/" + env.instsoname).c_str());
}

}  // namespace

std::optional<PythonEnvironment> discover_interpreter(const DiscoverOptions& options, std::string* error) {
  std::string python = options.python;
  if (python.empty()) {
    auto found = default_python(error);
    if (!found) return std::nullopt;
    python = *found;
  }
  // The script goes on stdin (`python -`), not in argv: a program that is not Python then never
  // sees it, and cannot echo it back in an error ("File name too long" from `ls -c SCRIPT`).
  // -S: site.py's main() is the probe's to call, without the environment's code (probe_script).
  std::optional<support::ProcessResult> result;
  {
    support::ChildInputsNoted noted;  // note_probe_inputs, below, once it has answered
    result = support::run_process({python, "-S", "-"}, options.timeout, kMaxProbeOutput, error, probe_script());
  }
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
  note_probe_inputs(python, result->out, *env);
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

// The pythonX.Y directories of a prefix's lib/ and lib64/ (Fedora's standard library), sorted.
std::vector<std::string> lib_python_dirs(const fs::path& prefix, const FileRoot& root) {
  std::set<std::string> out;
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"})
    for (fs::directory_iterator it(root.host((prefix / lib).string()), ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::string n = it->path().filename().string();
      if (n.starts_with("python3.") && it->is_directory(ec)) out.insert(n.substr(6));
    }
  return {out.begin(), out.end()};
}

// "7", "0rc2", "0a1+": PY_VERSION's part after "X.Y.", as the release level and serial of
// sys.version_info.
std::optional<PythonVersionInfo> parse_micro(std::string_view micro, const PythonVersionInfo& xy) {
  size_t digits = micro.find_first_not_of("0123456789");
  if (digits == 0 || micro.empty() || micro.size() > 8) return std::nullopt;
  std::string_view level = digits == std::string_view::npos ? "" : micro.substr(digits);
  if (level.ends_with("+")) level.remove_suffix(1);  // a build between releases
  PythonVersionInfo v = xy;
  static const std::pair<std::string_view, const char*> kLevels[] = {
      {"a", "alpha"}, {"b", "beta"}, {"rc", "candidate"}};
  if (!level.empty()) {
    auto it =
        std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return level.starts_with(l.first); });
    if (it == std::end(kLevels)) return std::nullopt;
    std::string_view serial = level.substr(it->first.size());
    if (serial.empty() || serial.size() > 4 || serial.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    v.releaselevel = it->second;
    v.serial = std::stoi(std::string(serial));
  }
  v.micro = std::stoi(std::string(micro.substr(0, digits)));
  return v;
}

// PY_VERSION ("3.11.2", "3.13.0rc2", "3.14.0a1+") as the interpreter's own file holds it: the
// NUL-terminated string that Py_GetVersion() formats into sys.version, in the executable or in
// libpython when the executable links it. The linker may merge it into a longer string that ends
// with it ("/opt/python/3.11.7", "Python-3.11.7": tail merging of SHF_STRINGS sections), so a
// string of its own is taken first, else the version every string ending in "X.Y.N" agrees on.
std::optional<PythonVersionInfo> version_in_file(const std::string& host_path, const PythonVersionInfo& xy) {
  std::string error;
  std::unique_ptr<MappedFile> file = MappedFile::open(host_path, &error);
  if (!file) return std::nullopt;
  std::string_view bytes(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size());
  std::string needle = xy.short_str() + ".";
  std::optional<PythonVersionInfo> merged;
  bool disagree = false;
  for (size_t at = bytes.find(needle, 1); at != std::string_view::npos; at = bytes.find(needle, at + 1)) {
    char before = bytes[at - 1];
    if ((before >= '0' && before <= '9') || before == '.') continue;  // "13.11.7", "1.3.11.7"
    size_t end = bytes.find('\0', at);
    if (end == std::string_view::npos) break;
    std::optional<PythonVersionInfo> v = parse_micro(bytes.substr(at + needle.size(), end - at - needle.size()), xy);
    if (!v) continue;
    if (before == '\0') return v;
    if (merged && merged->full_str() != v->full_str()) disagree = true;
    if (!merged) merged = v;
  }
  return disagree ? std::nullopt : merged;
}

// PY_VERSION in the interpreter's Include/patchlevel.h (#define PY_VERSION "3.11.7"), installed
// with its headers (pyenv, conda, python.org builds; Debian's with python3.X-dev).
std::optional<PythonVersionInfo> version_in_patchlevel(const std::string& host_path, const PythonVersionInfo& xy) {
  std::optional<std::string> text = read_bounded_file(host_path, 1 << 20, nullptr);
  if (!text) return std::nullopt;
  std::string define = "#define PY_VERSION";
  size_t at = text->find(define);
  if (at == std::string::npos) return std::nullopt;
  size_t open = text->find('"', at), close = open == std::string::npos ? open : text->find('"', open + 1);
  if (close == std::string::npos) return std::nullopt;
  std::string_view version = std::string_view(*text).substr(open + 1, close - open - 1);
  std::string prefix = xy.short_str() + ".";
  if (!version.starts_with(prefix)) return std::nullopt;
  return parse_micro(version.substr(prefix.size()), xy);
}

// The user site directory as site.py names it: $PYTHONUSERBASE or ~/.local, then
// lib/pythonX.Y/site-packages. In a root, its user is root (HOME=/root, as docker run sets it).
std::string user_site_dir(const std::string& xy, const FileRoot& root) {
  std::string base;
  if (!root.empty()) base = "/root/.local";
  else if (const char* env = std::getenv("PYTHONUSERBASE"); env && *env) base = env;
  else if (const char* home = std::getenv("HOME"); home && *home) base = std::string(home) + "/.local";
  return base.empty() ? "" : base + "/lib/python" + xy + "/site-packages";
}

// sys.path as getpath and site.py make it for this layout: the standard library's zip, its
// directory and lib-dynload under platlibdir, then site.main()'s directories: a venv's own, the
// user's, the distribution's (site_layout.h's rules), each with its .pth files.
void fill_sys_path(PythonEnvironment& env, const SiteRules& rules, const FileRoot& root) {
  std::string xy = env.version_info.short_str();
  std::string nodot = std::to_string(env.version_info.major) + std::to_string(env.version_info.minor);
  std::string lib = env.base_prefix + "/" + rules.platlibdir;
  std::vector<std::string> initial = {lib + "/python" + nodot + ".zip", lib + "/python" + xy,
                                      lib + "/python" + xy + "/lib-dynload"};
  std::vector<std::string> site_dirs;
  bool user_site = !env.in_venv() || env.include_system_site_packages;
  std::vector<std::string> prefixes = {env.base_prefix};  // PREFIXES: prefix and exec_prefix, the same here
  if (env.in_venv()) {
    // site.venv(): the venv's own directories first; its PREFIXES then the venv alone, or the
    // venv before the base with include-system-site-packages.
    site_dirs = getsitepackages(rules, xy, {env.prefix}, true);
    prefixes = env.include_system_site_packages ? std::vector<std::string>{env.prefix, env.base_prefix}
                                                : std::vector<std::string>{env.prefix};
  }
  if (std::string user = user_site_dir(xy, root); user_site && !user.empty()) site_dirs.push_back(user);
  for (const std::string& dir : getsitepackages(rules, xy, prefixes, env.in_venv())) site_dirs.push_back(dir);
  SitePath site =
      add_site_dirs(initial, site_dirs, {env.version_info.major, env.version_info.minor, env.version_info.micro}, root);
  env.sys_path = std::move(site.sys_path);
  env.site_code_not_run = std::move(site.not_run);
  for (SiteCode& module : customize_modules(env.sys_path, user_site, root))
    env.site_code_not_run.push_back(std::move(module));
}

// sysconfig's default scheme: a venv's own (posix_prefix, "venv" from 3.11); Debian's
// posix_local outside one, where pip installs (/usr/local/lib/python3.X/dist-packages); upstream's
// posix_prefix, platlib under platlibdir (Fedora's lib64), under PREFIX/local for Fedora's.
void fill_paths(PythonEnvironment& env, const SiteRules& rules) {
  std::string xy = env.version_info.short_str();
  env.paths.stdlib = env.paths.platstdlib = env.base_prefix + "/" + rules.platlibdir + "/python" + xy;
  env.paths.include = env.base_prefix + "/include/python" + xy;
  if (rules.flavor == SiteFlavor::kDebian && !env.in_venv()) {
    env.paths.stdlib = env.paths.platstdlib = env.base_prefix + "/lib/python" + xy;
    env.paths.purelib = env.paths.platlib = env.prefix + "/local/lib/python" + xy + "/dist-packages";
    env.paths.scripts = env.prefix + "/local/bin";
    env.paths.data = env.prefix + "/local";
    return;
  }
  // Fedora's sysconfig (patch 00251) installs under PREFIX/local outside a virtual environment
  // (pip install --prefix=/usr writes /usr/local/lib64/python3.X/site-packages).
  std::string base = rules.flavor == SiteFlavor::kFedora && !env.in_venv() ? env.prefix + "/local" : env.prefix;
  env.paths.purelib = base + "/lib/python" + xy + "/site-packages";
  env.paths.platlib = base + "/" + rules.platlibdir + "/python" + xy + "/site-packages";
  env.paths.scripts = base + "/bin";
  env.paths.data = base;
}

void fill_layout(PythonEnvironment& env, const FileRoot& root) {
  std::string xy = env.version_info.short_str();
  SiteRules rules = read_site_rules(env.base_prefix, xy, root);
  fill_sys_path(env, rules, root);
  fill_paths(env, rules);
  std::error_code ec;
  // libpython: LIBDIR is PREFIX/{platlibdir}; Debian's multiarch LIBDIR (/usr/lib/x86_64-linux-gnu)
  // holds it only with libpython3.X installed, and its python3.X does not link it.
  env.libdir = env.base_prefix + "/" + rules.platlibdir;
  env.ldlibrary = "libpython" + xy + ".so";
  env.instsoname = "libpython" + xy + ".so.1.0";
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

// X.Y from the layout: the one pythonX.Y directory of lib/ (or lib64/), or, with several, the one
// bin/python3 resolves to (Ubuntu's python3.10 beside a deadsnakes python3.12).
std::optional<PythonVersionInfo> version_of_layout(const fs::path& prefix, const FileRoot& root, std::string* why) {
  std::vector<std::string> libs = lib_python_dirs(prefix, root);
  if (libs.empty()) {
    *why = prefix.string() + ": no pyvenv.cfg version and no lib/python3.X directory";
    return std::nullopt;
  }
  std::string chosen = libs.front();
  if (libs.size() > 1) {
    std::string python3 = (prefix / "bin/python3").string();
    std::string target =
        fs::path(root.empty() ? fs::weakly_canonical(python3).string() : root.canonical(python3)).filename().string();
    auto named = std::find_if(libs.begin(), libs.end(), [&](const std::string& xy) { return target == "python" + xy; });
    if (named == libs.end()) {
      *why = prefix.string() + ": several lib/python3.X directories, and neither pyvenv.cfg nor bin/python3 chooses";
      return std::nullopt;
    }
    chosen = *named;
  }
  std::optional<PythonVersionInfo> version = parse_version_text(chosen);
  if (!version) *why = prefix.string() + ": cannot read the version of lib/python" + chosen;
  return version;
}

// The version the interpreter's executable or its libpython holds (version_in_file), when it is
// of the same X.Y.
std::optional<PythonVersionInfo> version_of_interpreter(const PythonEnvironment& env, const FileRoot& root) {
  std::string xy = env.version_info.short_str();
  PythonVersionInfo base{env.version_info.major, env.version_info.minor};
  std::vector<std::string> files;
  if (!env.program().empty()) files.push_back(env.program());
  for (const char* lib : {"/lib/", "/lib64/"}) files.push_back(env.base_prefix + lib + "libpython" + xy + ".so.1.0");
  for (const std::string& file : files)
    if (std::optional<PythonVersionInfo> v = version_in_file(root.host(file), base)) return v;
  return version_in_patchlevel(root.host(env.base_prefix + "/include/python" + xy + "/patchlevel.h"), base);
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
    std::string why;
    version = version_of_layout(prefix, root, &why);
    if (!version) return fail(why);
  }
  env.version_info = *version;
  env.executable = find_executable(env, root);
  if (!env.executable.empty())
    env.real_executable =
        root.empty() ? fs::weakly_canonical(env.executable, ec).string() : root.canonical(env.executable);
  // The micro version and release level from the interpreter's own files, which pyvenv.cfg (written
  // when the venv was made) and the layout (X.Y alone) may not know.
  if (std::optional<PythonVersionInfo> read = version_of_interpreter(env, root)) env.version_info = *read;
  fill_layout(env, root);
  fill_platform(env);
  return env;
}

}  // namespace envdoctor::python
