#include "checks/transformer_engine.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "advice/install.h"
#include "checks/transformer_engine_rule.h"
#include "imports/python_process.h"
#include "imports/python_source.h"
#include "loader/process.h"

namespace envdoctor::checks {

using imports::find_on_path;
using imports::GlobListings;
using imports::ldconfig_print;
using imports::path_exists;
using imports::path_is_dir;
using imports::process_variable;
using imports::python_glob;

namespace fs = std::filesystem;
using environment::Environment;

namespace {

constexpr std::string_view kFile = "transformer_engine/common/__init__.py";

// What one import does: every copy it loads, or the exception that ends it.
struct TeRun {
  bool decided = true;               // false: a step whose outcome is not modelled (a variable set to "")
  std::optional<std::string> error;  // the traceback's last line
  std::string library;               // the library being loaded when it ended ("cudnn")
  bool strict = false;               // it ended in the loads required from the wheels
  std::string file, place;           // for an OSError: the copy that did not load, and how it was found
  struct Loaded {
    std::string library, path;
    bool system = false;  // by the system search (a place or the unversioned dlopen)
    std::string place;    // how: "CUDA_HOME=/usr/local/cuda", "/usr/local/cuda", "dlopen(\"libcudnn.so\")"
  };
  std::vector<Loaded> loaded;
  std::vector<std::string> searched;  // for people, each miss of the system search
};

// What every run of the search in one check shares: the import model, and the directories read.
struct TeShared {
  explicit TeShared(const Environment& env) : env(env) {}
  const Environment& env;
  GlobListings listings;
};

class TeImport {
 public:
  TeImport(const Environment& env, const TeRule& rule, TeShared& shared,
           std::map<std::string, std::string> overrides = {})
      : env_(env), rule_(rule), shared_(shared), overrides_(std::move(overrides)) {}

  TeRun run() const {
    TeRun out;
    imports::ImportModel::Interpreter python = imports::ImportModel::start_in(shared_.env, shared_.env.loader);
    if (!python.found || env_.python.paths.purelib.empty()) {
      out.decided = false;
      return out;
    }
    if (rule_.shape == TeRule::Shape::kPerLibrary) run_loaders(python, out);
    else run_shared(python, out);
    return out;
  }

 private:
  using Step = TeRule::Step;

  // 2.11 on: _load_cuda_library for each library, then the strict loads where they run.
  void run_shared(imports::ImportModel::Interpreter& python, TeRun& out) const {
    std::map<std::string, bool> flags;
    for (const auto& [lib, kept] : rule_.loads) {
      std::optional<bool> system = from_system(python, lib, out);
      if (!system || out.error || !out.decided) return;
      if (!*system && (!from_wheels(python, lib, out) || out.error)) {
        if (!out.error) fail(out, lib, "RuntimeError: " + te_for_library(rule_.not_found, lib), false);
        return;
      }
      if (!kept.empty()) flags[kept] = *system;
    }
    bool no_toolkit =
        !rule_.no_toolkit_when.empty() && std::none_of(rule_.no_toolkit_when.begin(), rule_.no_toolkit_when.end(),
                                                       [&](const std::string& flag) { return flags[flag]; });
    if (no_toolkit)
      for (const std::string& lib : rule_.strict) {
        bool found = from_wheels(python, lib, out);
        if (out.error) return;
        if (!found) {
          fail(out, lib, "RuntimeError: " + te_for_library(rule_.strict_not_found, lib), true);
          return;
        }
      }
  }

  // 2.4 to 2.10: each library's own function, its steps in order until one returns.
  void run_loaders(imports::ImportModel::Interpreter& python, TeRun& out) const {
    for (const TeRule::Loader& loader : rule_.loaders)
      for (const Step& step : loader.steps) {
        std::optional<bool> returned = step.kind == Step::Kind::kHomeGlob ? home_glob(python, loader.lib, step, out)
                                       : step.kind == Step::Kind::kWheel  ? wheel(python, loader.lib, step, out)
                                       : step.kind == Step::Kind::kLdconfig
                                           ? ldconfig(python, loader.lib, step, out)
                                           : dlopen_name(python, loader.lib, step, out);
        if (!returned) return;  // out.error, or no verdict
        if (*returned) break;
      }
  }

  static void fail(TeRun& out, const std::string& lib, std::string words, bool strict) {
    out.error = std::move(words);
    out.library = lib;
    out.strict = strict;
  }

  std::optional<std::string> variable(const std::string& name) const {
    auto it = overrides_.find(name);
    return it != overrides_.end() ? std::optional<std::string>(it->second) : process_variable(env_, name);
  }

  // ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL): false, with the OSError, where it does not load.
  bool open(imports::ImportModel::Interpreter& python, const std::string& path, const std::string& lib, bool system,
            const std::string& place, TeRun& out) const {
    loader::Process::DlopenResult r = python.process.dlopen(path, true, python.caller);
    if (r.object < 0) {
      out.file = path;
      out.place = place;
      fail(out, lib,
           "OSError: " + (r.first ? r.first->message
                                  : path + ": cannot open shared object file: No such file or "
                                           "directory"),
           false);
      return false;
    }
    out.loaded.push_back({lib, python.process.objects()[r.object].path, system, place});
    return true;
  }

  // _load_cuda_library_from_system: true where a copy loaded, false where none was found;
  // nullopt where the import ends here (out.error) or no verdict can be given.
  std::optional<bool> from_system(imports::ImportModel::Interpreter& python, const std::string& lib, TeRun& out) const {
    std::string pattern = "lib" + lib + ".so*";
    for (const TeRule::Place& place : rule_.places) {
      std::string name = te_for_library(place.variable, lib);
      std::optional<std::string> value = place.variable.empty() ? place.path : variable(name);
      std::string label = place.variable.empty() ? *value : name + "=" + value.value_or("");
      if (!value) {
        out.searched.push_back(name + " (unset)");
        continue;
      }
      // A glob of "/**/" (the whole file system), or a value whose '*', '?' or '[' Python's
      // glob takes as a pattern.
      if (value->empty() || value->find_first_of("*?[") != std::string::npos) {
        out.decided = false;
        return std::nullopt;
      }
      std::vector<std::string> libs = python_glob(env_, te_for_library(*value, lib), pattern, true, &shared_.listings);
      std::erase_if(libs, [](const std::string& p) { return p.find("stub") != std::string::npos; });
      std::stable_sort(libs.begin(), libs.end(), [](const std::string& a, const std::string& b) {
        return fs::path(a).filename().string() > fs::path(b).filename().string();
      });
      if (!libs.empty())
        return open(python, libs.front(), lib, true, label, out) ? std::optional<bool>(true) : std::nullopt;
      out.searched.push_back(label + " (no " + pattern + " below it)");
    }
    std::string unversioned = "lib" + lib + ".so";
    loader::Process::Mark before = python.process.mark();
    loader::Process::DlopenResult r = python.process.dlopen(unversioned, true, python.caller);
    if (r.object >= 0) {
      out.loaded.push_back({lib, python.process.objects()[r.object].path, true, "dlopen(\"" + unversioned + "\")"});
      return true;
    }
    python.process.rollback(std::move(before));
    out.searched.push_back("dlopen(\"" + unversioned + "\") (not found)");
    return false;
  }

  // _load_cuda_library_from_python: whether a folder held copies (each then loaded).
  bool from_wheels(imports::ImportModel::Interpreter& python, const std::string& lib, TeRun& out) const {
    std::string nvidia = env_.python.paths.purelib + "/nvidia";
    for (const TeRule::WheelStep& step : rule_.wheels) {
      if (!step.isdir.empty() && !path_is_dir(env_, nvidia + "/" + te_for_library(step.isdir, lib))) continue;
      std::string glob = nvidia + "/" + te_for_library(step.glob, lib);
      std::vector<std::string> found = python_glob(env_, glob.substr(0, glob.rfind('/')),
                                                   glob.substr(glob.rfind('/') + 1), false, &shared_.listings);
      if (found.empty()) continue;
      for (const std::string& path : found)
        if (!open(python, path, lib, false, glob, out)) break;  // out.error says why
      return true;
    }
    return false;
  }

  // `home = os.environ.get(A) or ... [or fallback]`, [`if home:`], then the recursive glob below
  // it: true where a copy loaded, false where the step found none; nullopt where the import ends
  // here (out.error) or no verdict can be given.
  std::optional<bool> home_glob(imports::ImportModel::Interpreter& python, const std::string& lib, const Step& step,
                                TeRun& out) const {
    std::optional<std::string> home;
    std::string label, names;
    for (const std::string& name : step.variables) {
      home = variable(name);
      label = name + "=";
      names += (names.empty() ? "" : " and ") + name;
      if (home && !home->empty()) break;
    }
    if ((!home || home->empty()) && step.fallback) {
      home = step.fallback;
      label.clear();
    }
    if (!home || home->empty()) {
      // Unguarded, Python globs "None/**/..." (below the working directory) or "/**/...".
      if (!step.guarded) out.decided = false;
      out.searched.push_back(names + (home ? " (empty)" : " (unset)"));
      return step.guarded ? std::optional<bool>(false) : std::nullopt;
    }
    // Below the working directory; or a value whose '*', '?' or '[' Python's glob takes as a
    // pattern.
    if (home->front() != '/' || home->find_first_of("*?[") != std::string::npos) {
      out.decided = false;
      return std::nullopt;
    }
    std::vector<std::string> libs = python_glob(env_, *home, step.pattern, true, &shared_.listings);
    std::erase_if(libs, [&](const std::string& p) { return holds_any(p, step.drop); });
    std::stable_sort(libs.begin(), libs.end(), [](const std::string& a, const std::string& b) {
      return fs::path(a).filename().string() > fs::path(b).filename().string();
    });
    if (!libs.empty())
      return open(python, libs.front(), lib, true, label + *home, out) ? std::optional<bool>(true) : std::nullopt;
    out.searched.push_back(label + *home + " (no " + step.pattern + " below it)");
    return false;
  }

  // _load_nvidia_cuda_library(folder): every match of its glob opened, in listing order.
  std::optional<bool> wheel(imports::ImportModel::Interpreter& python, const std::string& lib, const Step& step,
                            TeRun& out) const {
    std::string glob = env_.python.paths.purelib + "/" + te_for_library(rule_.wheel_glob, step.folder);
    size_t slash = glob.rfind('/');
    std::vector<std::string> found =
        python_glob(env_, glob.substr(0, slash), glob.substr(slash + 1), false, &shared_.listings);
    if (found.empty()) {
      out.searched.push_back(glob.substr(0, slash) + " (no " + glob.substr(slash + 1) + ")");
      return false;
    }
    for (const std::string& path : found)
      if (!open(python, path, lib, false, glob, out)) return std::nullopt;
    return true;
  }

  // The lines of `ldconfig -p` (or of its grep), the first holding every wanted string opened:
  // the path after its first '>' (lib.split(">")[1].strip()).
  std::optional<bool> ldconfig(imports::ImportModel::Interpreter& python, const std::string& lib, const Step& step,
                               TeRun& out) const {
    std::optional<std::vector<std::string>> lines =
        step.grep ? shell_lines(lib, step, out) : exec_lines(lib, step, out);
    if (!lines) return std::nullopt;
    // libs.decode("utf-8") raises on a byte it cannot decode (and grep in a UTF-8 locale would
    // have called such input binary): not modelled.
    if (!std::all_of(lines->begin(), lines->end(), valid_utf8)) {
      out.decided = false;
      return std::nullopt;
    }
    for (const std::string& line : *lines) {
      if (holds_any(line, step.drop) || !std::all_of(step.want.begin(), step.want.end(), [&](const std::string& w) {
            return line.find(w) != std::string::npos;
          }))
        continue;
      size_t gt = line.find('>');
      if (gt == std::string::npos) {
        out.decided = false;  // IndexError
        return std::nullopt;
      }
      // str.strip(): ASCII's blanks and separators; a non-ASCII character at either end, which
      // may be Unicode's white space, gets no verdict.
      const char* blanks = " \t\n\r\f\v\x1c\x1d\x1e\x1f";
      std::string path = line.substr(gt + 1, line.find('>', gt + 1) - gt - 1);
      path.erase(0, path.find_first_not_of(blanks));
      path.erase(path.find_last_not_of(blanks) + 1);
      if (!path.empty() &&
          (static_cast<unsigned char>(path.front()) >= 0x80 || static_cast<unsigned char>(path.back()) >= 0x80)) {
        out.decided = false;
        return std::nullopt;
      }
      return open(python, path, lib, true, "`" + shown(step) + "`", out) ? std::optional<bool>(true) : std::nullopt;
    }
    out.searched.push_back("`" + shown(step) + "` (no line holds " + quoted_list(step.want) + ")");
    return false;
  }

  // Whether Python's UTF-8 decoder takes `s` whole: no stray continuation byte, no overlong form,
  // no surrogate, nothing past U+10FFFF.
  static bool valid_utf8(const std::string& s) {
    auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
    for (size_t i = 0; i < s.size();) {
      unsigned char c = at(i);
      size_t more = c < 0x80                 ? 0
                    : c >= 0xc2 && c <= 0xdf ? 1
                    : c >= 0xe0 && c <= 0xef ? 2
                    : c >= 0xf0 && c <= 0xf4 ? 3
                                             : 4;
      if (more == 4) return false;
      for (size_t k = 1; k <= more; ++k)
        if ((at(i + k) & 0xc0) != 0x80) return false;
      unsigned char next = at(i + 1);
      if ((c == 0xe0 && next < 0xa0) || (c == 0xed && next > 0x9f) || (c == 0xf0 && next < 0x90) ||
          (c == 0xf4 && next > 0x8f))
        return false;
      i += more + 1;
    }
    return true;
  }

  static std::string shown(const Step& step) { return step.grep ? step.command : "ldconfig -p"; }

  static std::string quoted_list(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "\"" : " and \"") + w + "\"";
    return out;
  }

  static bool holds_any(const std::string& s, const std::vector<std::string>& parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](const std::string& p) { return s.find(p) != std::string::npos; });
  }

  static std::string called_process_error(const Step& step, int status) {
    return "subprocess.CalledProcessError: Command '" + step.command + "' returned non-zero exit status " +
           std::to_string(status) + ".";
  }

  // Where the root's ldconfig lies off PATH: " but in /sbin".
  std::string ldconfig_elsewhere() const {
    std::optional<std::string> other = find_on_path(env_, "/sbin:/usr/sbin", "ldconfig");
    return other && !other->empty() ? " but in " + fs::path(*other).parent_path().string() : "";
  }

  // check_output(["ldconfig", "-p"]): execvp's search of PATH (os.defpath where it is unset).
  std::optional<std::vector<std::string>> exec_lines(const std::string& lib, const Step& step, TeRun& out) const {
    std::string path = variable("PATH").value_or("/bin:/usr/bin");
    std::optional<std::string> ldconfig = find_on_path(env_, path, "ldconfig");
    if (!ldconfig) {
      out.decided = false;
      return std::nullopt;
    }
    if (ldconfig->empty()) {
      out.searched.push_back("`ldconfig -p` (ldconfig is not on PATH=" + path + ldconfig_elsewhere() + ")");
      fail(out, lib, "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'", false);
      return std::nullopt;
    }
    std::optional<std::vector<std::string>> lines = ldconfig_print(env_.loader);
    if (!lines) {
      out.searched.push_back("`ldconfig -p` (there is no " + env_.loader.cache_path + " for it to read)");
      fail(out, lib, called_process_error(step, 1), false);
    }
    return lines;
  }

  // check_output("ldconfig -p | grep 'P'", shell=True): /bin/sh finds both on PATH, and the
  // pipeline's status is grep's: 127 where grep is not found, 1 where no line matches (ldconfig
  // not found, or without a cache, writes none).
  std::optional<std::vector<std::string>> shell_lines(const std::string& lib, const Step& step, TeRun& out) const {
    std::optional<std::string> path = variable("PATH");
    std::optional<std::string> ldconfig = path ? find_on_path(env_, *path, "ldconfig") : std::nullopt;
    std::optional<std::string> grep = path ? find_on_path(env_, *path, "grep") : std::nullopt;
    // No PATH: sh's own default; a grep pattern with a special character other than '.'.
    if (!ldconfig || !grep || !path_exists(env_, "/bin/sh") ||
        step.grep->find_first_of("\\[]*^$") != std::string::npos) {
      out.decided = false;
      return std::nullopt;
    }
    if (grep->empty()) {
      out.searched.push_back("`" + step.command + "` (grep is not on PATH=" + *path + ")");
      fail(out, lib, called_process_error(step, 127), false);
      return std::nullopt;
    }
    std::optional<std::vector<std::string>> lines = ldconfig->empty() ? std::nullopt : ldconfig_print(env_.loader);
    std::vector<std::string> matched;
    for (const std::string& line : lines.value_or(std::vector<std::string>{}))
      if (grep_matches(line, *step.grep)) matched.push_back(line);
    if (!matched.empty()) return matched;
    std::string why = ldconfig->empty() ? "ldconfig is not on PATH=" + *path + ldconfig_elsewhere()
                      : !lines          ? "there is no " + env_.loader.cache_path + " for ldconfig to read"
                                        : "no line of the cache matches '" + *step.grep + "'";
    out.searched.push_back("`" + step.command + "` (" + why + ", so grep exits with status 1)");
    fail(out, lib, called_process_error(step, 1), false);
    return std::nullopt;
  }

  // grep's match of a basic regular expression of literal characters and '.' within a line.
  static bool grep_matches(const std::string& line, const std::string& pattern) {
    for (size_t at = 0; at + pattern.size() <= line.size(); ++at)
      if (std::equal(pattern.begin(), pattern.end(), line.begin() + static_cast<long>(at),
                     [](char p, char c) { return p == '.' || p == c; }))
        return true;
    return false;
  }

  // ctypes.CDLL(name), uncaught: the loader's own search, whose failure ends the import.
  std::optional<bool> dlopen_name(imports::ImportModel::Interpreter& python, const std::string& lib, const Step& step,
                                  TeRun& out) const {
    loader::Process::DlopenResult r = python.process.dlopen(step.pattern, true, python.caller);
    if (r.object >= 0) {
      out.loaded.push_back({lib, python.process.objects()[r.object].path, true, "dlopen(\"" + step.pattern + "\")"});
      return true;
    }
    std::string words =
        r.first ? r.first->message : step.pattern + ": cannot open shared object file: No such file or directory";
    out.searched.push_back("dlopen(\"" + step.pattern + "\") (" + words + ")");
    fail(out, lib, "OSError: " + words, false);
    return std::nullopt;
  }

  const Environment& env_;
  const TeRule& rule_;
  TeShared& shared_;
  std::map<std::string, std::string> overrides_;
};

// The variables the rule reads for a library's own search, in the order it tries them: 2.11's
// places ({LIB}_HOME, {LIB}_PATH, CUDA_HOME, CUDA_PATH), or the home steps of the library's
// function (CUDNN_HOME, CUDNN_PATH, CUDA_HOME, CUDA_PATH).
std::vector<std::string> variables_for(const TeRule& rule, const std::string& lib) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const TeRule::Place& p : rule.places) add(te_for_library(p.variable, lib));
  for (const TeRule::Loader& loader : rule.loaders)
    if (loader.lib == lib)
      for (const TeRule::Step& step : loader.steps)
        for (const std::string& name : step.variables) add(name);
  return out;
}

// The globs below site-packages/nvidia that the rule tries for a library ("cudnn/lib/lib*.so.*[0-9]").
std::vector<std::string> wheel_globs(const TeRule& rule, const std::string& lib) {
  std::vector<std::string> out;
  for (const TeRule::WheelStep& s : rule.wheels) out.push_back(te_for_library(s.glob, lib));
  for (const TeRule::Loader& loader : rule.loaders)
    if (loader.lib == lib)
      for (const TeRule::Step& step : loader.steps)
        if (step.kind == TeRule::Step::Kind::kWheel)
          out.push_back(te_for_library(rule.wheel_glob, step.folder).substr(std::string_view("nvidia/").size()));
  return out;
}

// The directories of the environment that hold libNAME.so*, in path order.
std::vector<std::string> copies_of(const Environment& env, const std::string& lib) {
  std::vector<std::string> out;
  for (const environment::ElfRecord& e : env.elf_files) {
    std::string name = fs::path(e.path).filename().string();
    std::string dir = fs::path(e.path).parent_path().string();
    if (name.starts_with("lib" + lib + ".so") && e.path.find("stub") == std::string::npos &&
        std::find(out.begin(), out.end(), dir) == out.end())
      out.push_back(dir);
  }
  return out;
}

// A variable that makes the import pass, tried on the model itself: one the failing library's
// search reads pointed at a copy in the environment; where the strict loads failed, a system
// NVRTC or cuRAND that skips them; where an ldconfig step failed for want of ldconfig on PATH,
// PATH with its directory. "" when none does.
std::string passing_variable(const Environment& env, const TeRule& rule, TeShared& shared, const TeRun& failed) {
  std::vector<std::string> libs;
  if (failed.strict)
    for (const auto& [lib, kept] : rule.loads)
      if (std::find(rule.no_toolkit_when.begin(), rule.no_toolkit_when.end(), kept) != rule.no_toolkit_when.end())
        libs.push_back(lib);
  libs.push_back(failed.library);
  auto passes = [&](const std::string& name, const std::string& value) {
    TeRun again = TeImport(env, rule, shared, {{name, value}}).run();
    return again.decided && !again.error;
  };
  for (const std::string& lib : libs)
    for (const std::string& name : variables_for(rule, lib))
      for (const std::string& dir : copies_of(env, lib))
        if (passes(name, dir)) return name + "=" + dir;
  std::optional<std::string> ldconfig = find_on_path(env, "/sbin:/usr/sbin", "ldconfig");
  std::optional<std::string> path = process_variable(env, "PATH");
  if (rule.shape == TeRule::Shape::kPerLibrary && ldconfig && !ldconfig->empty() && path) {
    std::string more = *path + ":" + fs::path(*ldconfig).parent_path().string();
    if (passes("PATH", more)) return "PATH=" + more;
  }
  return "";
}

// The NVIDIA wheels of the table that put libNAME.so.* where a folder of the rule looks.
std::vector<std::string> wheels_for(const Context& ctx, const TeRule& rule, const std::string& lib, int cuda) {
  std::vector<std::string> out;
  for (const environment::KnownLibrary& k : ctx.knowledge.libraries()) {
    if (!k.soname.starts_with("lib" + lib + ".so.") || (cuda && k.cuda != cuda)) continue;
    std::vector<std::string> globs = wheel_globs(rule, lib);
    bool searched = std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
      return "nvidia/" + g.substr(0, g.rfind('/')) == k.folder;
    });
    if (searched && std::find(out.begin(), out.end(), k.package) == out.end()) out.push_back(k.package);
  }
  return out;
}

std::string list_words(const std::vector<std::string>& items, std::string_view last_join) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? std::string(last_join) : ", ") + items[i];
  return out;
}

// Python's int() of a decimal string: blanks around it, a sign, '_' between digits; nullopt
// where int() raises (or the value does not fit, which no verdict here needs).
std::optional<int> python_int(std::string text) {
  size_t first = text.find_first_not_of(" \t\n\r\f\v"), last = text.find_last_not_of(" \t\n\r\f\v");
  if (first == std::string::npos) return std::nullopt;
  text = text.substr(first, last - first + 1);
  bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') text.erase(0, 1);
  if (text.empty() || text.front() == '_' || text.back() == '_' || text.find("__") != std::string::npos)
    return std::nullopt;
  std::erase(text, '_');
  long value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || value > 100000000) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return static_cast<int>(negative ? -value : value);
}

class TeFindings {
 public:
  TeFindings(const Context& ctx, const environment::RuntimeLoad& row, const TeRule& rule, TeShared& shared,
             const python::Distribution* owner)
      : ctx_(ctx), env_(ctx.env), row_(row), rule_(rule), shared_(shared), owner_(owner) {}

  Finding failure(const TeRun& run) const {
    Finding f = base(Severity::kError);
    f.message = *run.error;
    bool per_library = rule_.shape == TeRule::Shape::kPerLibrary;
    // A bare wheel load (cuda_runtime) names no library: the file that did not load.
    f.library = per_library && !run.file.empty() ? fs::path(run.file).filename().string() : "lib" + run.library + ".so";
    std::string h = who() + " loads " + list_words(loaded_names(), " and ") + " itself at import (" + row_.what +
                    ") and fails at " + run.library + ": ";
    if (run.strict)
      h += "neither NVRTC nor cuRAND came from a CUDA toolkit, so cuBLAS, cudart and cuDNN must come from the "
           "wheels under " +
           env_.python.paths.purelib + "/nvidia, and " + wheel_folders(run.library) + " holds no " + run.library;
    else if (run.error->starts_with("OSError: ") && !run.file.empty())
      h += "it took " + run.file + " (" + env_.owner_label(run.file) + ", found by " + run.place +
           "), which does not load";
    else if (per_library)
      h += "it tried " + list_words(run.searched, ", then ") +
           (run.error->starts_with("OSError: ")
                ? ""
                : ", and the ldconfig step raises before the last one, the dlopen of the unversioned name that "
                  "LD_LIBRARY_PATH takes part in (TransformerEngine#2373)");
    else
      h += "it searched " + list_words(run.searched, " and ") + ", then " + wheel_folders(run.library) +
           ", and found none (LD_LIBRARY_PATH and ld.so.cache take part only in the dlopen of the unversioned name, "
           "which only a development package installs)";
    f.caused_by = lost_copy(run);
    std::string fix = passing_variable(env_, rule_, shared_, run);
    if (f.caused_by) {
      f.caused_by->how = h + "; " + f.caused_by->how;
    } else if (!fix.empty()) {
      h += "; set " + fix + " before starting Python, and the import passes";
    } else if (std::vector<std::string> wheels = wheels_for(ctx_, rule_, run.library, cuda_major()); !wheels.empty()) {
      h += "; install " + list_words(wheels, " or ") + ", whose folder it searches";
      f.fix_command = advice::index_install(env_, owner_, wheels.front(), false);
    } else {
      h += "; set CUDA_HOME to a CUDA toolkit that holds lib" + run.library + ".so*";
    }
    f.hint = h;
    return f;
  }

  // A toolkit's copy loaded ahead of a wheel's of the same SONAME: it serves the whole process.
  std::optional<Finding> ahead_of_wheel(const TeRun::Loaded& l) const {
    const environment::ElfRecord* wheel = wheel_copy(l.path);
    if (!wheel) return std::nullopt;
    const python::Distribution* provider = env_.owner(wheel->path);
    std::string soname(*wheel->opened->elf->soname);
    Finding f = base(Severity::kWarning);
    f.library = soname;
    f.message = who() + " loads " + l.path + " (" + env_.owner_label(l.path) + ", found by " + l.place +
                ") with RTLD_GLOBAL at import, not " + provider->name + "'s " + wheel->path + ": every later need of " +
                soname + " in the process is served by it";
    std::string h = "the first copy of a SONAME loaded serves it to the whole process, and " + who() +
                    " searches the CUDA toolkit's places before the wheels, so torch and every other user of " +
                    soname + " get that build, which may be another version than " + provider->name + " " +
                    provider->version + "'s";
    std::string dir = fs::path(wheel->path).parent_path().string();
    for (const std::string& name : variables_for(rule_, l.library)) {
      TeRun again = TeImport(env_, rule_, shared_, {{name, dir}}).run();
      auto same = std::find_if(again.loaded.begin(), again.loaded.end(),
                               [&](const TeRun::Loaded& x) { return x.library == l.library; });
      if (again.decided && !again.error && same != again.loaded.end() && same->path == wheel->path) {
        h += "; set " + name + "=" + dir + " before starting Python, and it loads the wheel's copy";
        break;
      }
    }
    f.hint = h;
    return f;
  }

 private:
  // A file that a RECORD puts in one of the wheel folders searched for the library, matching its
  // pattern, and that is missing: the cause of a RuntimeError.
  std::optional<Cause> lost_copy(const TeRun& run) const {
    if (run.error->starts_with("OSError: ")) return std::nullopt;
    std::string nvidia = env_.python.paths.purelib + "/nvidia/";
    for (const std::string& wheel_glob : wheel_globs(rule_, run.library)) {
      std::string glob = nvidia + wheel_glob;
      fs::path dir = fs::path(glob).parent_path();
      std::string pattern = fs::path(glob).filename().string();
      for (const python::Distribution& d : env_.inventory.distributions)
        for (const python::RecordEntry& e : d.record)
          if (e.resolved.parent_path() == dir &&
              ::fnmatch(pattern.c_str(), e.resolved.filename().c_str(), FNM_NOESCAPE) == 0 &&
              !env_.files.exists(e.resolved.string()))
            return Cause{Code::kRecordMissingFile, e.resolved.string(), std::nullopt, std::nullopt,
                         "it globs " + glob + ", where " + d.name + " " + d.version + "'s RECORD lists " +
                             e.resolved.filename().string() + " but the file is missing"};
    }
    return std::nullopt;
  }

  Finding base(Severity severity) const {
    Finding f;
    f.code = Code::kRuntimeLibraryMissing;
    f.severity = severity;
    f.file = rule_.file;
    if (owner_) f.package = owner_->name;
    return f;
  }

  std::string who() const {
    return owner_ ? owner_->name + " " + owner_->version + " (" + std::string(kFile) + ")" : rule_.file;
  }

  std::vector<std::string> loaded_names() const {
    std::vector<std::string> out;
    for (const auto& [lib, kept] : rule_.loads) out.push_back(lib);
    for (const TeRule::Loader& loader : rule_.loaders) out.push_back(loader.lib);
    return out;
  }

  std::string wheel_folders(const std::string& lib) const {
    return "site-packages/nvidia's " + list_words(wheel_globs(rule_, lib), " and ");
  }

  // The CUDA major of the TransformerEngine core package installed (transformer-engine-cu12).
  int cuda_major() const {
    for (const python::Distribution& d : env_.inventory.distributions)
      if (d.key().starts_with("transformer-engine-cu")) return std::atoi(d.key().c_str() + 21);
    return 0;
  }

  // A copy of `path`'s SONAME that a package of the environment owns, where `path` is another file.
  const environment::ElfRecord* wheel_copy(const std::string& path) const {
    const environment::ElfRecord* loaded = env_.elf(path);
    if (loaded && env_.owner(path)) return nullptr;  // a package's own copy
    std::shared_ptr<const loader::OpenResult> opened = env_.store->open(path);
    if (!opened || !opened->elf || !opened->elf->soname) return nullptr;
    for (const environment::ElfRecord& e : env_.elf_files)
      if (e.path != path && e.opened && e.opened->elf && e.opened->elf->soname == opened->elf->soname &&
          env_.owner(e.path))
        return &e;
    return nullptr;
  }

  const Context& ctx_;
  const Environment& env_;
  const environment::RuntimeLoad& row_;
  const TeRule& rule_;
  TeShared& shared_;
  const python::Distribution* owner_;
};

}  // namespace

std::vector<Finding> check_transformer_engine(const Context& ctx, const environment::RuntimeLoad& row) {
  const Environment& env = ctx.env;
  std::vector<Finding> out;
  std::optional<TeRule> rule;
  const python::Distribution* owner = nullptr;
  for (const python::Distribution& d : env.inventory.distributions) {
    for (const python::RecordEntry& e : d.record) {
      std::string path = e.resolved.string();
      if (!path.ends_with("/" + std::string(kFile))) continue;
      if ((rule = read_te_rule(path, env.files.read_text(path, 1 << 20)))) owner = &d;
      break;
    }
    if (rule) break;
  }
  if (!rule) return out;
  // NVTE_PROJECT_BUILDING skips the loads unless bool(int(NVTE_RELEASE_BUILD)) holds; a value
  // int() refuses raises ValueError before them, of which no verdict is given.
  if (process_variable(env, "NVTE_PROJECT_BUILDING")) {
    std::optional<int> release = python_int(process_variable(env, "NVTE_RELEASE_BUILD").value_or("0"));
    if (!release || *release == 0) return out;
  }
  TeShared shared(env);
  TeRun run = TeImport(env, *rule, shared).run();
  if (!run.decided) return out;
  TeFindings findings(ctx, row, *rule, shared, owner);
  if (run.error) {
    out.push_back(findings.failure(run));
    return out;
  }
  for (const TeRun::Loaded& l : run.loaded)
    if (l.system)
      if (std::optional<Finding> f = findings.ahead_of_wheel(l)) out.push_back(std::move(*f));
  return out;
}

}  // namespace envdoctor::checks
