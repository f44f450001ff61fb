#include "python/editable.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "python/metadata_file.h"
#include "python/record.h"
#include "support/text.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

constexpr u64 kMaxEditableFile = 1024 * 1024;

// A string literal as Python's repr() writes one (setuptools' template formats MAPPING with !r),
// and the plain literals a hand-written bootstrap holds: '...' or "...", with the escapes repr
// emits (\\, \', \", \n, \r, \t, \xHH, \uXXXX, \UXXXXXXXX). Anything else stops the reading:
// nothing is guessed.
class LiteralReader {
 public:
  explicit LiteralReader(std::string_view text, size_t at = 0) : text_(text), at_(at) {}

  size_t at() const { return at_; }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool peek(char c) {
    skip_space();
    return at_ < text_.size() && text_[at_] == c;
  }

  std::optional<std::string> string() {
    skip_space();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) return std::nullopt;
    char quote = text_[at_++];
    std::string out;
    while (at_ < text_.size() && text_[at_] != quote) {
      if (text_[at_] == '\n') return std::nullopt;
      if (text_[at_] != '\\') {
        out += text_[at_++];
        continue;
      }
      if (++at_ >= text_.size() || !escape(out)) return std::nullopt;
    }
    if (at_ >= text_.size()) return std::nullopt;
    ++at_;
    return out;
  }

  // ['a', 'b'] (a trailing comma allowed).
  std::optional<std::vector<std::string>> string_list() {
    if (!take('[')) return std::nullopt;
    std::vector<std::string> out;
    while (!take(']')) {
      std::optional<std::string> s = string();
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
      if (!take(',') && !peek(']')) return std::nullopt;
    }
    return out;
  }

 private:
  bool escape(std::string& out) {
    char c = text_[at_++];
    switch (c) {
      case '\\': out += '\\'; return true;
      case '\'': out += '\''; return true;
      case '"': out += '"'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'x': return code_point(2, out);
      case 'u': return code_point(4, out);
      case 'U': return code_point(8, out);
      default: return false;
    }
  }
  bool code_point(size_t digits, std::string& out) {
    if (text_.size() - at_ < digits) return false;
    u32 cp = 0;
    for (size_t i = 0; i < digits; ++i) {
      char c = text_[at_++];
      int v = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (v < 0) return false;
      cp = cp * 16 + static_cast<u32>(v);
    }
    if (cp > 0x10FFFF || cp == 0) return false;  // a NUL has no place in a path
    // UTF-8, as Python's file system encoding writes the path.
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return true;
  }

  std::string_view text_;
  size_t at_;
};

// {'key': VALUE, ...}, each VALUE a string (a one-element list here) or, with `lists`, a list of
// strings. nullopt for anything else.
std::optional<std::vector<std::pair<std::string, std::vector<std::string>>>> read_dict(LiteralReader& in, bool lists) {
  if (!in.take('{')) return std::nullopt;
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  while (!in.take('}')) {
    std::optional<std::string> key = in.string();
    if (!key || !in.take(':')) return std::nullopt;
    std::optional<std::vector<std::string>> value;
    if (lists) {
      value = in.string_list();
    } else if (std::optional<std::string> s = in.string()) {
      value = std::vector<std::string>{std::move(*s)};
    }
    if (!value) return std::nullopt;
    out.emplace_back(std::move(*key), std::move(*value));
    if (!in.take(',') && !in.peek('}')) return std::nullopt;
  }
  return out;
}

// The literal assigned to `name` at the start of a line: "NAME = {...}" or, as setuptools 66 and
// later write it, "NAME: dict[str, str] = {...}". nullopt when there is no such line.
std::optional<size_t> assignment(std::string_view source, std::string_view name) {
  for (size_t pos = 0; pos < source.size();) {
    size_t nl = source.find('\n', pos);
    std::string_view line = source.substr(pos, nl == source.npos ? source.npos : nl - pos);
    if (line.starts_with(name) && line.size() > name.size() &&
        (line[name.size()] == ' ' || line[name.size()] == ':' || line[name.size()] == '=')) {
      size_t eq = line.find('=', name.size());
      if (eq != line.npos) return pos + eq + 1;
    }
    if (nl == source.npos) break;
    pos = nl + 1;
  }
  return std::nullopt;
}

std::string normal(const std::string& base, const std::string& path) { return lexically_resolve(base, path).string(); }

std::optional<std::string> read_text(const std::string& path, const support::FileRoot& root,
                                     std::vector<std::string>* problems) {
  std::string error;
  bool truncated = false;
  std::optional<std::string> text = read_bounded_file(root.host(path), kMaxEditableFile, &error, &truncated);
  // The error names the file ("x.pth: Permission denied"): its directory goes before it.
  if (!text) problems->push_back(fs::path(path).parent_path().string() + "/" + error);
  else if (truncated) problems->push_back(path + ": larger than 1 MiB, read in part");
  return text;
}

bool is_directory(const std::string& path, const support::FileRoot& root) {
  std::error_code ec;
  return fs::is_directory(root.host(path), ec);
}

void add_root(std::vector<ImportRoot>& roots, ImportRoot r) {
  if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(std::move(r));
}

// A finder's mapping of `name` to `path`: a directory is a package, anything else a module.
void add_mapped(std::vector<ImportRoot>& roots, const std::string& name, const std::string& path,
                const std::string& via, const support::FileRoot& root) {
  std::string p = normal("/", path);
  bool package = is_directory(p, root);
  add_root(roots, {package ? ImportRoot::kPackage : ImportRoot::kModule, p, name, via});
}

// The finder module an import line of a .pth imports, read from the directory of the .pth (where
// setuptools and `editables` put it, and the first place sys.path has it). False when the module
// is not one whose shape is read.
bool read_finder(std::vector<ImportRoot>& roots, const std::string& module, const std::string& site_dir,
                 const support::FileRoot& root, std::vector<std::string>* problems) {
  std::string path = site_dir + "/" + module + ".py";
  std::error_code ec;
  if (!fs::exists(root.host(path), ec)) return false;
  std::optional<std::string> source = read_text(path, root, problems);
  if (!source) return true;
  FinderMapping finder;
  if (parse_setuptools_finder(*source, &finder)) {
    for (const auto& [name, dir] : finder.mapping) add_mapped(roots, name, dir, path, root);
    for (const auto& [name, dirs] : finder.namespaces)
      for (const std::string& dir : dirs) add_root(roots, {ImportRoot::kPackage, normal("/", dir), name, path});
    return true;
  }
  auto mapped = parse_editables_bootstrap(*source);
  for (const auto& [name, file] : mapped) {
    // editables maps a package to its __init__.py.
    fs::path f = normal("/", file);
    if (f.filename() == "__init__.py") add_root(roots, {ImportRoot::kPackage, f.parent_path().string(), name, path});
    else add_root(roots, {ImportRoot::kModule, f.string(), name, path});
  }
  return !mapped.empty();
}

}  // namespace

bool is_module_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

bool imports_from(const ImportRoot& root, std::string_view path) {
  if (root.kind == ImportRoot::kModule) {
    if (path == root.path) return true;
    // setuptools' finder: candidate_path.with_suffix(s) for each of importlib's suffixes.
    if (!path.starts_with(root.path) || path.size() <= root.path.size() + 1 || path[root.path.size()] != '.')
      return false;
    return path.find('/', root.path.size()) == std::string_view::npos;
  }
  std::string_view dir = root.path;
  if (dir.ends_with('/')) dir.remove_suffix(1);  // "/"
  if (!path.starts_with(dir) || path.size() <= dir.size() + 1 || path[dir.size()] != '/') return false;
  std::string_view rest = path.substr(dir.size() + 1);
  for (size_t slash; (slash = rest.find('/')) != std::string_view::npos; rest.remove_prefix(slash + 1))
    if (!is_module_name(rest.substr(0, slash))) return false;
  return !rest.empty();
}

PthLines parse_pth(std::string_view text, const std::string& site_dir) {
  PthLines out;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
    pos = nl == text.npos ? text.size() : nl + 1;
    // site.addpackage: comments and blank lines skipped, "import " and "import\t" lines run, any
    // other line rstripped and joined to the site directory.
    if (line.starts_with('#') || trim(line).empty()) continue;
    if (line.starts_with("import ") || line.starts_with("import\t")) {
      out.imports.emplace_back(trim(line));
      continue;
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (line.find('\0') != line.npos) continue;
    out.dirs.push_back(normal(site_dir, std::string(line)));
  }
  return out;
}

std::string imported_module(std::string_view line) {
  if (!line.starts_with("import")) return "";
  std::string_view rest = trim(line.substr(6));
  size_t end = 0;
  while (end < rest.size() && rest[end] != ';' && rest[end] != ' ' && rest[end] != '\t' && rest[end] != ',') ++end;
  std::string_view module = rest.substr(0, end);
  return is_module_name(module) ? std::string(module) : "";
}

bool parse_setuptools_finder(std::string_view source, FinderMapping* out) {
  std::optional<size_t> mapping = assignment(source, "MAPPING");
  if (!mapping) return false;
  LiteralReader in(source, *mapping);
  auto dict = read_dict(in, false);
  if (!dict) return false;
  out->mapping.clear();
  for (auto& [name, value] : *dict) out->mapping.emplace_back(std::move(name), std::move(value.front()));
  out->namespaces.clear();
  if (std::optional<size_t> ns = assignment(source, "NAMESPACES")) {
    LiteralReader nin(source, *ns);
    if (auto namespaces = read_dict(nin, true)) out->namespaces = std::move(*namespaces);
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> parse_editables_bootstrap(std::string_view source) {
  std::vector<std::pair<std::string, std::string>> out;
  static constexpr std::string_view kCall = ".map_module(";
  for (size_t pos = source.find(kCall); pos != source.npos; pos = source.find(kCall, pos + 1)) {
    LiteralReader in(source, pos + kCall.size());
    std::optional<std::string> name = in.string();
    if (!name || !in.take(',')) continue;
    std::optional<std::string> path = in.string();
    if (path && in.take(')') && !path->empty() && (*path)[0] == '/')
      out.emplace_back(std::move(*name), std::move(*path));
  }
  return out;
}

bool reads_pth_files(const std::string& site_dir) {
  // site.py reads the .pth files of the site directories it adds itself: site-packages (and
  // Debian's dist-packages), not of a directory that PYTHONPATH or a .pth line put on sys.path.
  std::string name = fs::path(site_dir).filename().string();
  return name == "site-packages" || name == "dist-packages";
}

std::vector<ImportRoot> read_editable_pth(const std::string& pth, const std::string& owner,
                                          const support::FileRoot& root, std::vector<std::string>* problems) {
  std::vector<ImportRoot> roots;
  std::optional<std::string> text = read_text(pth, root, problems);
  if (!text) return roots;
  std::string site_dir = fs::path(pth).parent_path().string();
  PthLines lines = parse_pth(*text, site_dir);
  for (const std::string& dir : lines.dirs)
    if (is_directory(dir, root)) add_root(roots, {ImportRoot::kPath, dir, "", pth});
  for (const std::string& line : lines.imports) {
    std::string module = imported_module(line);
    if (module.empty() || !read_finder(roots, module, site_dir, root, problems))
      problems->push_back(pth + ": the import line of " + owner + "'s editable install is not read ('" + line +
                          "'): the modules it makes importable are not checked");
  }
  return roots;
}

std::optional<std::string> read_egg_link(const std::string& path, const support::FileRoot& root,
                                         std::vector<std::string>* problems) {
  std::optional<std::string> text = read_text(path, root, problems);
  if (!text) return std::nullopt;
  std::string first(trim(std::string_view(*text).substr(0, text->find('\n'))));
  if (first.empty() || first.find('\0') != std::string::npos) return std::nullopt;
  return normal(fs::path(path).parent_path().string(), first);
}

}  // namespace envdoctor::python
