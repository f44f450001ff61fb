#include "checks/transformer_engine_rule.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "imports/python_source.h"

namespace envdoctor::checks {

using imports::literal_at;

namespace {

std::string replace_all(std::string s, std::string_view key, std::string_view value) {
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
    s.replace(at, key.size(), value);
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The block whose header line starts at `at`: up to the next line that starts in column 0.
std::string_view block_at(std::string_view text, size_t at) {
  size_t end = text.find('\n', at);
  while (end != std::string_view::npos && end + 1 < text.size() &&
         (text[end + 1] == ' ' || text[end + 1] == '\t' || text[end + 1] == '\n' || text[end + 1] == '\r'))
    end = text.find('\n', end + 1);
  return text.substr(at, (end == std::string_view::npos ? text.size() : end) - at);
}

// The top-level function `name`: from its `def` to the next line that starts in column 0. Empty
// where the module defines it twice (Python takes the last) or assigns the name at top level.
std::string_view function_body(std::string_view text, std::string_view name) {
  const std::string def_line = "\ndef " + std::string(name) + "(";
  size_t def = text.find(def_line);
  if (def == std::string_view::npos || text.find(def_line, def + 1) != std::string_view::npos ||
      text.find("\n" + std::string(name) + " =") != std::string_view::npos ||
      text.find("\n" + std::string(name) + "=") != std::string_view::npos)
    return {};
  return block_at(text, def + 1);
}

std::vector<std::string_view> stripped_lines(std::string_view body) {
  std::vector<std::string_view> out;
  while (!body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    size_t first = line.find_first_not_of(" \t");
    size_t last = line.find_last_not_of(" \t\r");
    if (first != std::string_view::npos && last != std::string_view::npos && last >= first)
      out.push_back(line.substr(first, last - first + 1));
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

// The file's search in the shape of 2.11 and later.
std::optional<TeRule> read_shared(const std::string& file, std::string_view text) {
  TeRule r;
  r.file = file;
  r.shape = TeRule::Shape::kShared;
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

// ---- 2.4 to 2.10: a function of its own for each library, read statement by statement.

// A logical line of Python: its block depth (0 for the block's own statements) and its text,
// the lines of a bracketed expression joined into one as black would write it on one line.
struct Statement {
  int depth = 0;
  std::string text;
};

// The code of `line` without a trailing comment, and how far it opens brackets (those inside
// strings not counted).
std::pair<std::string_view, int> code_of(std::string_view line) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      line = line.substr(0, i);
      break;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
  }
  size_t last = line.find_last_not_of(" \t\r");
  return {line.substr(0, last == std::string_view::npos ? 0 : last + 1), depth};
}

// The statements of a block whose first line (a `def` or an `if`) is its header, without
// comments and docstrings; nullopt where its lines do not make statements as Python reads them
// (brackets left open, an indentation that opens no block or that a tab makes, a docstring with
// code after it).
std::optional<std::vector<Statement>> statements(std::string_view block) {
  size_t header = block.find('\n');
  if (block.empty() || header == std::string_view::npos) return std::nullopt;
  std::vector<Statement> out;
  std::vector<size_t> indents;
  bool opens_block = false;  // the last statement ends in ':'
  std::string pending;
  size_t pending_indent = 0;
  int open = 0;
  bool in_docstring = false;
  // A statement at `indent`, kept unless it is a docstring, which counts for the blocks alone.
  auto emit = [&](size_t indent, bool keep) {
    if (indents.empty() || indent > indents.back()) {
      if (!indents.empty() && !opens_block) return false;
      indents.push_back(indent);
    } else {
      if (opens_block) return false;
      while (!indents.empty() && indent < indents.back()) indents.pop_back();
      if (indents.empty() || indents.back() != indent) return false;
    }
    opens_block = keep && pending.ends_with(':');
    if (keep) out.push_back({static_cast<int>(indents.size()) - 1, std::move(pending)});
    pending.clear();
    return true;
  };
  const std::string_view quotes = "\"\"\"";
  for (std::string_view line : stripped_lines(block.substr(header + 1))) {
    size_t offset = static_cast<size_t>(line.data() - block.data());
    size_t line_start = block.rfind('\n', offset) + 1;
    size_t indent = offset - line_start;
    if (in_docstring) {
      size_t close = line.find(quotes);
      if (close != std::string_view::npos && close + quotes.size() != line.size()) return std::nullopt;
      in_docstring = close == std::string_view::npos;
      continue;
    }
    if (open == 0 && block.substr(line_start, indent).find('\t') != std::string_view::npos) return std::nullopt;
    if (open == 0 && line.starts_with(quotes)) {
      size_t close = line.find(quotes, quotes.size());
      if (close != std::string_view::npos && close + quotes.size() != line.size()) return std::nullopt;
      in_docstring = close == std::string_view::npos;
      if (!emit(indent, false)) return std::nullopt;
      continue;
    }
    auto [code, delta] = code_of(line);
    if (code.empty()) continue;
    if (open == 0) {
      pending_indent = indent;
      pending = code;
    } else if (std::string_view(")]}").find(code.front()) != std::string_view::npos) {
      if (pending.ends_with(',')) pending.pop_back();  // the trailing comma of a broken call
      pending += code;
    } else {
      if (std::string_view("([{").find(pending.back()) == std::string_view::npos) pending += ' ';
      pending += code;
    }
    open += delta;
    if (open < 0 || (open == 0 && !emit(pending_indent, true))) return std::nullopt;
  }
  if (open != 0 || in_docstring || out.empty() || opens_block) return std::nullopt;
  return out;
}

// The statements of a block, read one after another.
class Cursor {
 public:
  explicit Cursor(std::vector<Statement> s) : s_(std::move(s)) {}
  bool done() const { return at_ == s_.size(); }
  size_t mark() const { return at_; }
  void back_to(size_t at) { at_ = at; }

  // The next statement, where it is `text` at `depth`: taken.
  bool take(int depth, std::string_view text) {
    if (done() || s_[at_].depth != depth || s_[at_].text != text) return false;
    ++at_;
    return true;
  }
  // What lies between `prefix` and `suffix` in the next statement, where it is at `depth` and
  // has both: taken.
  std::optional<std::string> take_around(int depth, std::string_view prefix, std::string_view suffix) {
    if (done() || s_[at_].depth != depth) return std::nullopt;
    std::string_view t = s_[at_].text;
    if (t.size() < prefix.size() + suffix.size() || !t.starts_with(prefix) || !t.ends_with(suffix)) return std::nullopt;
    ++at_;
    return std::string(t.substr(prefix.size(), t.size() - prefix.size() - suffix.size()));
  }

 private:
  std::vector<Statement> s_;
  size_t at_ = 0;
};

bool is_identifier(std::string_view s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s.front())) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A folder name under site-packages/nvidia, as one path element.
bool is_folder(const std::optional<std::string>& folder) {
  return folder && !folder->empty() && *folder != "." && *folder != ".." &&
         folder->find_first_of("*?[/") == std::string::npos;
}

// The strings of a condition such as `"stub" in x or "libnvrtc-builtins" in x` (each `"S" in
// name`, joined by `join`); nullopt for any other.
std::optional<std::vector<std::string>> contained(std::string_view s, std::string_view name, std::string_view join) {
  std::vector<std::string> out;
  const std::string in = " in " + std::string(name);
  while (true) {
    size_t end = s.find(join);
    std::string_view term = s.substr(0, end);
    if (!term.ends_with(in)) return std::nullopt;
    std::optional<std::string> word = string_arg(term.substr(0, term.size() - in.size()));
    if (!word) return std::nullopt;
    out.push_back(*word);
    if (end == std::string_view::npos) return out;
    s.remove_prefix(end + join.size());
  }
}

// What _get_sys_extension() returns where platform.system() is "Linux": ".so" (2.5 on: the first
// branch returns it; nothing after is reached), or "so" (2.4: the first branch sets it, the
// others are elif and else, and the function then returns it), whose f-strings put the dot.
std::optional<std::string> read_extension(std::string_view text) {
  std::optional<std::vector<Statement>> body = statements(function_body(text, "_get_sys_extension"));
  if (!body) return std::nullopt;
  const std::vector<Statement> b = *body;
  Cursor s(std::move(*body));
  if (!s.take(0, "system = platform.system()") || !s.take(0, "if system == \"Linux\":")) return std::nullopt;
  if (s.take(1, "return \".so\"")) return ".so";
  if (!s.take(1, "extension = \"so\"") || b.size() < 4 || b[3].depth != 0) return std::nullopt;
  for (size_t i = 3; i < b.size(); ++i) {
    if (b[i].depth != 0) continue;
    if (b[i].text == "return extension") return i + 1 == b.size() ? std::optional<std::string>("so") : std::nullopt;
    if (!b[i].text.starts_with("elif ") && b[i].text != "else:") return std::nullopt;
  }
  return std::nullopt;
}

// A string argument with the extension put in. Only _load_nvidia_cuda_library has a `lib_name`
// (`with_lib`); elsewhere its fields would raise NameError.
std::optional<std::string> string_with(std::string_view s, const std::string& ext, bool with_lib = false) {
  std::optional<std::string> out = string_arg(s);
  if (!out || (!with_lib && (out->find("{lib}") != std::string::npos || out->find("{LIB}") != std::string::npos)))
    return std::nullopt;
  return replace_all(*out, "{ext}", ext);
}

// _load_nvidia_cuda_library: a glob below purelib, each match opened. Its glob, to the letter.
bool read_wheel_loader(std::string_view text, const std::string& ext, TeRule& r) {
  std::optional<std::vector<Statement>> body = statements(function_body(text, "_load_nvidia_cuda_library"));
  if (!body) return false;
  Cursor s(std::move(*body));
  std::optional<std::string> arg =
      s.take_around(0, "so_paths = glob.glob(os.path.join(sysconfig.get_path(\"purelib\"), ", "))");
  std::optional<std::string> glob = arg ? string_with(*arg, ext, true) : std::nullopt;
  if (!glob || !glob->starts_with("nvidia/{lib}/") || glob->find('/', 13) == std::string::npos ||
      glob->substr(13, glob->rfind('/') - 13).find_first_of("*?[{") != std::string::npos ||
      !s.take(0, "path_found = len(so_paths) > 0") || !s.take(0, "ctypes_handles = []") ||
      !s.take(0, "if path_found:") || !s.take(1, "for so_path in so_paths:") ||
      !s.take(2, "ctypes_handles.append(ctypes.CDLL(so_path, mode=ctypes.RTLD_GLOBAL))") ||
      !s.take(0, "return path_found, ctypes_handles") || !s.done())
    return false;
  r.wheel_glob = *glob;
  return true;
}

// `home = os.environ.get("A") or os.environ.get("B") [or "fallback"]`, [`if home:`], and the
// recursive glob below it, filtered, sorted and its first opened.
std::optional<TeRule::Step> read_home_glob(Cursor& s, const std::string& ext) {
  TeRule::Step step;
  step.kind = TeRule::Step::Kind::kHomeGlob;
  size_t start = s.mark();
  auto fail = [&]() {
    s.back_to(start);
    return std::nullopt;
  };
  // The variable's name is whatever the assignment names.
  std::optional<std::string> whole = s.take_around(0, "", "");
  if (!whole) return fail();
  size_t eq = whole->find(" = ");
  if (eq == std::string::npos || !is_identifier(whole->substr(0, eq))) return fail();
  std::string name = whole->substr(0, eq);
  // A name the function reads would be local to it from the start (UnboundLocalError).
  for (std::string_view used : {"os", "glob", "ctypes", "subprocess", "list", "filter", "len", "_get_sys_extension",
                                "_load_nvidia_cuda_library", "libs", "lib", "sos", "found", "handle", "x"})
    if (name == used) return fail();
  std::string_view rhs = std::string_view(*whole).substr(eq + 3);
  while (true) {
    size_t end = rhs.find(" or ");
    std::string_view term = rhs.substr(0, end);
    const std::string_view get = "os.environ.get(";
    if (term.starts_with(get) && term.ends_with(")")) {
      std::optional<std::string> v = string_arg(term.substr(get.size(), term.size() - get.size() - 1));
      if (!v || step.fallback) return fail();
      step.variables.push_back(*v);
    } else {
      std::optional<std::string> v = string_arg(term);
      if (!v || end != std::string_view::npos || step.variables.empty()) return fail();
      step.fallback = *v;
    }
    if (end == std::string_view::npos) break;
    rhs.remove_prefix(end + 4);
  }
  step.guarded = s.take(0, "if " + name + ":");
  int d = step.guarded ? 1 : 0;
  std::optional<std::string> pattern =
      s.take_around(d, "libs = glob.glob(f\"{" + name + "}/**/", "\", recursive=True)");
  std::optional<std::string> glob = pattern ? string_with("f\"" + *pattern + "\"", ext) : std::nullopt;
  if (!glob || glob->find('/') != std::string::npos) return fail();
  step.pattern = *glob;
  if (std::optional<std::string> filter = s.take_around(d, "libs = list(filter(lambda x: not (", "), libs))")) {
    std::optional<std::vector<std::string>> drop = contained(*filter, "x", " or ");
    if (!drop) return fail();
    step.drop = *drop;
  }
  if (!s.take(d, "libs.sort(reverse=True, key=os.path.basename)") || !s.take(d, "if libs:") ||
      !s.take(d + 1, "return ctypes.CDLL(libs[0], mode=ctypes.RTLD_GLOBAL)"))
    return fail();
  return step;
}

// `found, handle = _load_nvidia_cuda_library("folder")`, `if found:`, `return handle`.
std::optional<TeRule::Step> read_wheel_step(Cursor& s) {
  size_t start = s.mark();
  std::optional<std::string> arg = s.take_around(0, "found, handle = _load_nvidia_cuda_library(", ")");
  std::optional<std::string> folder = arg ? string_arg(*arg) : std::nullopt;
  if (!is_folder(folder) || !s.take(0, "if found:") || !s.take(1, "return handle")) {
    s.back_to(start);
    return std::nullopt;
  }
  TeRule::Step step;
  step.kind = TeRule::Step::Kind::kWheel;
  step.folder = *folder;
  return step;
}

// The lines of `ldconfig -p` (through `| grep` in a shell, or whole), the first holding every
// wanted string taken.
std::optional<TeRule::Step> read_ldconfig_step(Cursor& s, const std::string& ext) {
  TeRule::Step step;
  step.kind = TeRule::Step::Kind::kLdconfig;
  size_t start = s.mark();
  auto fail = [&]() {
    s.back_to(start);
    return std::nullopt;
  };
  std::optional<std::string> arg = s.take_around(0, "libs = subprocess.check_output(", ")");
  if (!arg) return fail();
  if (*arg == "[\"ldconfig\", \"-p\"]") {
    step.command = "['ldconfig', '-p']";
  } else {
    const std::string_view shell = ", shell=True", head = "ldconfig -p | grep '";
    std::optional<std::string> command =
        arg->ends_with(shell) ? string_with(arg->substr(0, arg->size() - shell.size()), ext) : std::nullopt;
    // The pattern quoted whole, not empty and not an option of grep's.
    if (!command || command->size() < head.size() + 2 || !command->starts_with(head) || !command->ends_with("'"))
      return fail();
    std::string pattern = command->substr(head.size(), command->size() - head.size() - 1);
    if (pattern.front() == '-' || pattern.find('\'') != std::string::npos) return fail();
    step.command = *command;
    step.grep = pattern;
  }
  if (!s.take(0, "libs = libs.decode(\"utf-8\").split(\"\\n\")") || !s.take(0, "sos = []") ||
      !s.take(0, "for lib in libs:"))
    return fail();
  size_t condition = s.mark();
  std::optional<std::string> skip = s.take_around(1, "if ", ":");
  if (skip && s.take(2, "continue")) {
    std::optional<std::vector<std::string>> drop = contained(*skip, "lib", " or ");
    if (!drop) return fail();
    step.drop = *drop;
  } else {
    s.back_to(condition);
  }
  std::optional<std::string> want = s.take_around(1, "if ", ":");
  std::optional<std::vector<std::string>> wanted = want ? contained(*want, "lib", " and ") : std::nullopt;
  if (!wanted || !s.take(2, "sos.append(lib.split(\">\")[1].strip())") || !s.take(0, "if sos:") ||
      !s.take(1, "return ctypes.CDLL(sos[0], mode=ctypes.RTLD_GLOBAL)"))
    return fail();
  step.want = *wanted;
  return step;
}

// _load_X: its steps, the last an uncaught ctypes.CDLL of a name.
std::optional<std::vector<TeRule::Step>> read_library_function(std::string_view text, const std::string& name,
                                                               const std::string& ext) {
  std::optional<std::vector<Statement>> body = statements(function_body(text, name));
  if (!body) return std::nullopt;
  Cursor s(std::move(*body));
  std::vector<TeRule::Step> steps;
  while (!s.done()) {
    std::optional<TeRule::Step> step = read_home_glob(s, ext);
    if (!step) step = read_wheel_step(s);
    if (!step) step = read_ldconfig_step(s, ext);
    if (!step) {
      std::optional<std::string> arg = s.take_around(0, "return ctypes.CDLL(", ", mode=ctypes.RTLD_GLOBAL)");
      std::optional<std::string> lib = arg ? string_with(*arg, ext) : std::nullopt;
      if (!lib || lib->find('/') != std::string::npos || !s.done()) return std::nullopt;
      step = TeRule::Step{};
      step->kind = TeRule::Step::Kind::kDlopen;
      step->pattern = *lib;
    }
    steps.push_back(std::move(*step));
  }
  if (steps.empty() || steps.back().kind != TeRule::Step::Kind::kDlopen) return std::nullopt;
  return steps;
}

// The module's loads under its NVTE_PROJECT_BUILDING guard (`block`), up to the core library's;
// the functions they call are those `defs` (the module before the guard) defines.
bool read_loaders(std::string_view defs, std::string_view block_text, const std::string& ext, TeRule& r) {
  std::optional<std::vector<Statement>> block = statements(block_text);
  if (!block) return false;
  for (const Statement& st : *block) {
    if (st.depth != 0) return false;
    // It raises only where the TE packages are installed inconsistently, which is not modelled.
    if (st.text == "sanity_checks_for_pypi_installation()") continue;
    size_t eq = st.text.find(" = ");
    if (eq == std::string::npos || !is_identifier(st.text.substr(0, eq))) return false;
    std::string_view call = std::string_view(st.text).substr(eq + 3);
    if (call == "_load_core_library()" || call == "_load_library()") return !r.loaders.empty();
    const std::string_view wheel = "_load_nvidia_cuda_library(";
    if (call.starts_with(wheel) && call.ends_with(")")) {
      std::optional<std::string> folder = string_arg(call.substr(wheel.size(), call.size() - wheel.size() - 1));
      if (!is_folder(folder)) return false;
      TeRule::Step step;
      step.kind = TeRule::Step::Kind::kWheel;
      step.folder = *folder;
      r.loaders.push_back({*folder, {step}});
      continue;
    }
    if (!call.starts_with("_load_") || !call.ends_with("()") || !is_identifier(call.substr(0, call.size() - 2)))
      return false;
    std::string function(call.substr(0, call.size() - 2));
    std::optional<std::vector<TeRule::Step>> steps = read_library_function(defs, function, ext);
    if (!steps) return false;
    r.loaders.push_back({function.substr(6), std::move(*steps)});
  }
  return false;
}

std::optional<TeRule> read_per_library(const std::string& file, std::string_view text) {
  TeRule r;
  r.file = file;
  r.shape = TeRule::Shape::kPerLibrary;
  size_t guard = text.find(
      "\nif \"NVTE_PROJECT_BUILDING\" not in os.environ or bool(int(os.getenv(\"NVTE_RELEASE_BUILD\", \"0\"))):\n");
  if (guard == std::string_view::npos) return std::nullopt;
  // What the guard's block calls must be defined before it runs.
  std::string_view defs = text.substr(0, guard + 1);
  std::optional<std::string> ext = read_extension(defs);
  if (!ext || !read_wheel_loader(defs, *ext, r) || !read_loaders(defs, block_at(text, guard + 1), *ext, r))
    return std::nullopt;
  return r;
}

}  // namespace

std::string te_for_library(const std::string& name, const std::string& lib) {
  return replace_all(replace_all(replace_all(name, "{LIB}", upper(lib)), "{lib}", lib), "{ext}", ".so");
}

std::optional<TeRule> read_te_rule(const std::string& file, std::string_view text) {
  // Python ends a line at a lone '\r' too, and reads a form feed or NUL otherwise than a blank;
  // such a file is not one of the releases'.
  for (size_t i = 0; i < text.size(); ++i)
    if ((text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) || text[i] == '\f' || text[i] == '\0')
      return std::nullopt;
  if (text.find("\ndef _load_cuda_library_from_system(") != std::string_view::npos) return read_shared(file, text);
  return read_per_library(file, text);
}

}  // namespace envdoctor::checks
