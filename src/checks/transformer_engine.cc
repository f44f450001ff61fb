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
#include "checks/python_source.h"
#include "imports/python_process.h"
#include "loader/process.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using environment::Environment;

namespace {

constexpr std::string_view kFile = "transformer_engine/common/__init__.py";

// What the installed transformer_engine/common/__init__.py does at import, read from its text.
// Names keep the placeholders {lib} (the library: "cudnn"), {LIB} (it in upper case) and {ext}
// (".so"), which each step puts in.
struct TeRule {
  std::string file;
  // _load_cuda_library_from_system's places, in order: a variable's value, or a path.
  struct Place {
    std::string variable;  // "CUDA_HOME", "{LIB}_HOME"; empty for a path
    std::string path;
  };
  std::vector<Place> places;
  // _load_cuda_library_from_python's folders under site-packages/nvidia, in order: each globbed
  // where its condition holds (a directory that must exist; none for an unconditional step).
  struct WheelStep {
    std::string isdir, glob;
  };
  std::vector<WheelStep> wheels;
  std::string not_found;         // _load_cuda_library's RuntimeError
  std::string strict_not_found;  // _load_cuda_library_from_python's, with strict=True
  // The libraries _load_cuda_library loads, in order, each with the variable that keeps whether
  // it came from the system ("" when the flag is dropped).
  std::vector<std::pair<std::string, std::string>> loads;
  std::vector<std::string> no_toolkit_when;  // the flags that, all false, make the strict loads run
  std::vector<std::string> strict;           // the libraries then required from the wheels
};

std::string replace_all(std::string s, std::string_view key, std::string_view value) {
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
    s.replace(at, key.size(), value);
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The places of a name: {lib}, {LIB} and {ext} put in.
std::string for_library(const std::string& name, const std::string& lib) {
  return replace_all(replace_all(replace_all(name, "{LIB}", upper(lib)), "{lib}", lib), "{ext}", ".so");
}

// The top-level function `name`: from its `def` to the next line that starts in column 0.
std::string_view function_body(std::string_view text, std::string_view name) {
  size_t def = text.find("\ndef " + std::string(name) + "(");
  if (def == std::string_view::npos) return {};
  size_t at = text.find('\n', def + 1);
  while (at != std::string_view::npos && at + 1 < text.size() &&
         (text[at + 1] == ' ' || text[at + 1] == '\t' || text[at + 1] == '\n' || text[at + 1] == '\r'))
    at = text.find('\n', at + 1);
  return text.substr(def + 1, (at == std::string_view::npos ? text.size() : at) - def - 1);
}

std::vector<std::string_view> stripped_lines(std::string_view body) {
  std::vector<std::string_view> out;
  while (!body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    size_t first = line.find_first_not_of(" \t");
    size_t last = line.find_last_not_of(" \t\r");
    if (first != std::string_view::npos) out.push_back(line.substr(first, last - first + 1));
    if (nl == std::string_view::npos) break;
    body.remove_prefix(nl + 1);
  }
  return out;
}

// A Python string argument, the whole of `s`: "..." or an f-string whose only fields are
// {lib_name}, {lib_name.upper()}, {ext} and {_get_sys_extension()}; nullopt for anything else.
std::optional<std::string> string_arg(std::string_view s) {
  bool f = !s.empty() && s.front() == 'f';
  std::optional<std::string> lit = literal_at(s, f ? 1 : 0);
  if (!lit || s.size() != lit->size() + (f ? 3 : 2) || lit->find('\\') != std::string::npos) return std::nullopt;
  if (!f) return lit->find('{') == std::string::npos ? lit : std::nullopt;
  std::string out = replace_all(replace_all(*lit, "{lib_name.upper()}", "{LIB}"), "{lib_name}", "{lib}");
  out = replace_all(out, "{_get_sys_extension()}", "{ext}");
  std::string rest = replace_all(replace_all(replace_all(out, "{LIB}", ""), "{lib}", ""), "{ext}", "");
  if (rest.find('{') != std::string::npos || rest.find('}') != std::string::npos) return std::nullopt;
  return out;
}

// The arguments of `call` ("os.path.join(nvidia_dir, ") on `line`, after the ones it names, up to
// its closing parenthesis, joined with '/' as os.path.join joins them: strings, and the name
// `lib_name` ({lib}).
std::optional<std::string> joined_args(std::string_view line, std::string_view call) {
  size_t at = line.find(call);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + call.size());
  size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  rest = rest.substr(0, close);
  std::string out;
  while (true) {
    size_t comma = rest.find(", ");
    std::string_view word = rest.substr(0, comma);
    std::optional<std::string> arg = word == "lib_name" ? std::optional<std::string>("{lib}") : string_arg(word);
    if (!arg) return std::nullopt;
    out += (out.empty() ? "" : "/") + *arg;
    if (comma == std::string_view::npos) return out;
    rest.remove_prefix(comma + 2);
  }
}

// The message of the `raise RuntimeError(...)` in `body`.
std::optional<std::string> raised(std::string_view body) {
  const std::string_view call = "raise RuntimeError(";
  size_t at = body.find(call);
  if (at == std::string_view::npos) return std::nullopt;
  size_t close = body.find(")\n", at);
  if (close == std::string_view::npos) return std::nullopt;
  return string_arg(body.substr(at + call.size(), close - at - call.size()));
}

bool has_all(std::string_view body, std::initializer_list<std::string_view> parts) {
  return !body.empty() && std::all_of(parts.begin(), parts.end(),
                                      [&](std::string_view p) { return body.find(p) != std::string_view::npos; });
}

// _load_cuda_library_from_system: its places, and the steps around them, to the letter.
bool read_system(std::string_view text, TeRule& r) {
  std::string_view body = function_body(text, "_load_cuda_library_from_system");
  if (!has_all(body,
               {"if path is None:",
                "libs = glob.glob(f\"{path}/**/lib{lib_name}{_get_sys_extension()}*\", "
                "recursive=True)",
                "libs = [lib for lib in libs if \"stub\" not in lib]", "libs.sort(reverse=True, key=os.path.basename)",
                "return True, ctypes.CDLL(libs[0], mode=ctypes.RTLD_GLOBAL)",
                "ctypes.CDLL(f\"lib{lib_name}{_get_sys_extension()}\", mode=ctypes.RTLD_GLOBAL)", "except OSError:"}))
    return false;
  std::vector<std::string_view> lines = stripped_lines(body);
  auto start = std::find(lines.begin(), lines.end(), "paths = (");
  if (start == lines.end()) return false;
  for (auto it = start + 1; it != lines.end(); ++it) {
    std::string_view line = *it;
    if (line == ")") return !r.places.empty();
    if (line.front() == '#') continue;
    if (line.back() == ',') line.remove_suffix(1);
    const std::string_view get = "os.environ.get(";
    bool is_variable = line.starts_with(get) && line.ends_with(")");
    std::optional<std::string> value =
        string_arg(is_variable ? line.substr(get.size(), line.size() - get.size() - 1) : line);
    if (!value) return false;
    r.places.push_back(is_variable ? TeRule::Place{*value, ""} : TeRule::Place{"", *value});
  }
  return false;
}

// _load_cuda_library_from_python: its folders, in order, and its strict words.
bool read_wheels(std::string_view text, TeRule& r) {
  std::string_view body = function_body(text, "_load_cuda_library_from_python");
  if (!has_all(body,
               {"ext = _get_sys_extension()", "nvidia_dir = os.path.join(sysconfig.get_path(\"purelib\"), \"nvidia\")",
                "ctypes.CDLL(so_path, mode=ctypes.RTLD_GLOBAL)", "if strict and not path_found:"}))
    return false;
  std::string condition;
  for (std::string_view line : stripped_lines(body)) {
    const std::string_view join = "os.path.join(nvidia_dir, ";
    if (line.find("os.path.isdir(" + std::string(join)) != std::string_view::npos) {
      std::optional<std::string> dir = joined_args(line, join);
      if (!dir) return false;
      condition = *dir;
    } else if (line.find("glob.glob(" + std::string(join)) != std::string_view::npos) {
      std::optional<std::string> glob = joined_args(line, join);
      if (!glob || glob->find('/') == std::string::npos ||
          glob->substr(0, glob->rfind('/')).find_first_of("*?[") != std::string::npos)
        return false;
      r.wheels.push_back({condition, *glob});
      condition.clear();
    }
  }
  std::optional<std::string> words = raised(body);
  if (!words || r.wheels.empty()) return false;
  r.strict_not_found = *words;
  return true;
}

// The module's own code after the definitions: which libraries it loads, and when the strict
// loads run.
bool read_loads(std::string_view text, TeRule& r) {
  size_t guard = text.find(
      "\nif \"NVTE_PROJECT_BUILDING\" not in os.environ or bool(int(os.getenv(\"NVTE_RELEASE_BUILD\", \"0\"))):\n");
  if (guard == std::string_view::npos) return false;
  for (std::string_view line : stripped_lines(text.substr(guard + 1))) {
    if (line.find("_load_core_library()") != std::string_view::npos) break;
    if (size_t at = line.find(" = _load_cuda_library(\""); at != std::string_view::npos) {
      std::optional<std::string> lib = literal_at(line, at + 22);
      if (!lib || !line.ends_with("\")")) return false;
      std::string kept(line.substr(0, line.find(',')));
      r.loads.emplace_back(*lib, kept == "_" ? "" : kept);
    } else if (line.starts_with("load_libs_for_no_ctk = ")) {
      std::string_view rest = line.substr(23);
      while (rest.starts_with("not ")) {
        size_t end = rest.find(" and ");
        r.no_toolkit_when.emplace_back(rest.substr(4, end == std::string_view::npos ? end : end - 4));
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 5);
      }
      if (!rest.empty()) return false;
    } else if (size_t call = line.find("_load_cuda_library_from_python(\""); call != std::string_view::npos) {
      std::optional<std::string> lib = literal_at(line, call + 31);
      if (!lib || !line.ends_with(", strict=True)")) return false;
      r.strict.push_back(*lib);
    }
  }
  return !r.loads.empty() && (r.strict.empty() || !r.no_toolkit_when.empty());
}

// The installed file's search, as far as its shape is known (2.11 and later); nullopt for any
// other shape, of which no verdict could be exact.
std::optional<TeRule> read_rule(const std::string& file, std::string_view text) {
  TeRule r;
  r.file = file;
  std::string_view load = function_body(text, "_load_cuda_library");
  if (text.find("return \".so\"") == std::string_view::npos || !read_system(text, r) || !read_wheels(text, r) ||
      !read_loads(text, r))
    return std::nullopt;
  size_t from_system = load.find("_load_cuda_library_from_system(lib_name)");
  size_t from_wheels = load.find("_load_cuda_library_from_python(lib_name)");
  std::optional<std::string> words = raised(load);
  if (from_system == std::string_view::npos || from_wheels == std::string_view::npos || from_system > from_wheels ||
      !words)
    return std::nullopt;
  r.not_found = *words;
  return r;
}

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
  explicit TeShared(const Environment& env) : model(env) {}
  imports::ImportModel model;
  GlobListings listings;
};

class TeImport {
 public:
  TeImport(const Environment& env, const TeRule& rule, TeShared& shared,
           std::map<std::string, std::string> overrides = {})
      : env_(env), rule_(rule), shared_(shared), overrides_(std::move(overrides)) {}

  TeRun run() const {
    TeRun out;
    imports::ImportModel::Interpreter python = shared_.model.start();
    if (!python.found || env_.python.paths.purelib.empty()) {
      out.decided = false;
      return out;
    }
    std::map<std::string, bool> flags;
    for (const auto& [lib, kept] : rule_.loads) {
      std::optional<bool> system = from_system(python, lib, out);
      if (!system || out.error || !out.decided) return out;
      if (!*system && (!from_wheels(python, lib, out) || out.error)) {
        if (!out.error) fail(out, lib, "RuntimeError: " + for_library(rule_.not_found, lib), false);
        return out;
      }
      if (!kept.empty()) flags[kept] = *system;
    }
    bool no_toolkit =
        !rule_.no_toolkit_when.empty() && std::none_of(rule_.no_toolkit_when.begin(), rule_.no_toolkit_when.end(),
                                                       [&](const std::string& flag) { return flags[flag]; });
    if (no_toolkit)
      for (const std::string& lib : rule_.strict) {
        bool found = from_wheels(python, lib, out);
        if (out.error) return out;
        if (!found) {
          fail(out, lib, "RuntimeError: " + for_library(rule_.strict_not_found, lib), true);
          return out;
        }
      }
    return out;
  }

 private:
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
      std::string name = for_library(place.variable, lib);
      std::optional<std::string> value = place.variable.empty() ? place.path : variable(name);
      std::string label = place.variable.empty() ? *value : name + "=" + value.value_or("");
      if (!value) {
        out.searched.push_back(name + " (unset)");
        continue;
      }
      if (value->empty()) {
        out.decided = false;  // glob of "/**/": the whole file system
        return std::nullopt;
      }
      std::vector<std::string> libs = python_glob(env_, for_library(*value, lib), pattern, true, &shared_.listings);
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
      if (!step.isdir.empty() && !path_is_dir(env_, nvidia + "/" + for_library(step.isdir, lib))) continue;
      std::string glob = nvidia + "/" + for_library(step.glob, lib);
      std::vector<std::string> found = python_glob(env_, glob.substr(0, glob.rfind('/')),
                                                   glob.substr(glob.rfind('/') + 1), false, &shared_.listings);
      if (found.empty()) continue;
      for (const std::string& path : found)
        if (!open(python, path, lib, false, glob, out)) break;  // out.error says why
      return true;
    }
    return false;
  }

  const Environment& env_;
  const TeRule& rule_;
  TeShared& shared_;
  std::map<std::string, std::string> overrides_;
};

// The variable that names a library's own place ({LIB}_HOME), where the rule reads one.
std::optional<std::string> own_variable(const TeRule& rule, const std::string& lib) {
  for (const TeRule::Place& p : rule.places)
    if (p.variable.find("{LIB}") != std::string::npos) return for_library(p.variable, lib);
  return std::nullopt;
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

// A variable that makes the import pass, tried on the model itself: the failing library's own
// place pointed at a copy in the environment, or, where the strict loads failed, a system
// NVRTC or cuRAND that skips them. "" when none does.
std::string passing_variable(const Environment& env, const TeRule& rule, TeShared& shared, const TeRun& failed) {
  std::vector<std::string> libs;
  if (failed.strict)
    for (const auto& [lib, kept] : rule.loads)
      if (std::find(rule.no_toolkit_when.begin(), rule.no_toolkit_when.end(), kept) != rule.no_toolkit_when.end())
        libs.push_back(lib);
  libs.push_back(failed.library);
  for (const std::string& lib : libs) {
    std::optional<std::string> name = own_variable(rule, lib);
    if (!name) continue;
    for (const std::string& dir : copies_of(env, lib)) {
      TeRun again = TeImport(env, rule, shared, {{*name, dir}}).run();
      if (again.decided && !again.error) return *name + "=" + dir;
    }
  }
  return "";
}

// The NVIDIA wheels of the table that put libNAME.so.* where a folder of the rule looks.
std::vector<std::string> wheels_for(const Context& ctx, const TeRule& rule, const std::string& lib, int cuda) {
  std::vector<std::string> out;
  for (const environment::KnownLibrary& k : ctx.knowledge.libraries()) {
    if (!k.soname.starts_with("lib" + lib + ".so.") || (cuda && k.cuda != cuda)) continue;
    bool searched = std::any_of(rule.wheels.begin(), rule.wheels.end(), [&](const TeRule::WheelStep& s) {
      std::string glob = "nvidia/" + for_library(s.glob, lib);
      return glob.substr(0, glob.rfind('/')) == k.folder;
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
    f.library = "lib" + run.library + ".so";
    std::string h = who() + " loads " + list_words(loaded_names(), " and ") + " itself at import (" + row_.what +
                    ") and fails at " + run.library + ": ";
    if (run.strict)
      h += "neither NVRTC nor cuRAND came from a CUDA toolkit, so cuBLAS, cudart and cuDNN must come from the "
           "wheels under " +
           env_.python.paths.purelib + "/nvidia, and " + wheel_folders(run.library) + " holds no " + run.library;
    else if (run.error->starts_with("OSError: "))
      h += "it took " + run.file + " (" + env_.owner_label(run.file) + ", found by " + run.place +
           "), which does not load";
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
    std::optional<std::string> name = own_variable(rule_, l.library);
    std::string dir = fs::path(wheel->path).parent_path().string();
    if (name) {
      TeRun again = TeImport(env_, rule_, shared_, {{*name, dir}}).run();
      auto same = std::find_if(again.loaded.begin(), again.loaded.end(),
                               [&](const TeRun::Loaded& x) { return x.library == l.library; });
      if (again.decided && !again.error && same != again.loaded.end() && same->path == wheel->path)
        h += "; set " + *name + "=" + dir + " before starting Python, and it loads the wheel's copy";
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
    for (const TeRule::WheelStep& step : rule_.wheels) {
      std::string glob = nvidia + for_library(step.glob, run.library);
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
    return out;
  }

  std::string wheel_folders(const std::string& lib) const {
    std::vector<std::string> dirs;
    for (const TeRule::WheelStep& s : rule_.wheels) dirs.push_back(for_library(s.glob, lib));
    return "site-packages/nvidia's " + list_words(dirs, " and ");
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
      if ((rule = read_rule(path, env.files.read_text(path, 1 << 20)))) owner = &d;
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
