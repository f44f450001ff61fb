#include "imports/python_source.h"

#include <fnmatch.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace envdoctor::imports {

namespace fs = std::filesystem;
using environment::Environment;

std::optional<std::string> literal_at(std::string_view text, size_t at) {
  if (at >= text.size() || (text[at] != '\'' && text[at] != '"')) return std::nullopt;
  char quote = text[at];
  std::string out;
  for (size_t i = at + 1; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == quote) return out;
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
  }
  return std::nullopt;
}

std::optional<std::string> process_variable(const Environment& env, const std::string& name) {
  if (env.image) {
    for (const auto& [key, value] : env.image->env)
      if (key == name) return value;
    return std::nullopt;
  }
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

bool path_exists(const Environment& env, const std::string& path) {
  environment::FileView::Kind kind = env.files.kind(path);
  if (kind == environment::FileView::Kind::kMissing) return false;
  std::error_code ec;
  return kind != environment::FileView::Kind::kLink || fs::exists(env.host(path), ec);
}

bool path_is_dir(const Environment& env, const std::string& path) {
  std::error_code ec;
  return !env.files.removed(path) && fs::is_directory(env.host(path), ec);
}

namespace {

// os.path.join(a, b) for a relative b.
std::string join(const std::string& a, const std::string& b) {
  return a.empty() || a.back() == '/' ? a + b : a + "/" + b;
}

// os.scandir's names of `dir` in listing order, only directories with `dirs_only`; hidden names
// left out where glob leaves them out.
std::vector<std::string> read_listing(const Environment& env, const std::string& dir, bool dirs_only, bool hidden) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(env.host(dir), ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string path = join(dir, name);
    if ((!hidden && name.front() == '.') || env.files.removed(path)) continue;
    // The entry's type as the listing gave it (d_type); only a link is followed, inside the root.
    if (dirs_only) {
      fs::file_type type = it->symlink_status(ec).type();
      if (ec) {
        ec.clear();
        continue;
      }
      if (type == fs::file_type::symlink ? !path_is_dir(env, path) : type != fs::file_type::directory) continue;
    }
    out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> list(const Environment& env, const std::string& dir, bool dirs_only, bool hidden,
                              GlobListings* listings) {
  if (!listings) return read_listing(env, dir, dirs_only, hidden);
  auto key = std::make_tuple(dir, dirs_only, hidden);
  auto it = listings->names.find(key);
  if (it == listings->names.end()) it = listings->names.emplace(key, read_listing(env, dir, dirs_only, hidden)).first;
  return it->second;
}

// _rlistdir: every directory below `dir`, relative to it, depth first. Linux gives up after 40
// links in one path, which also ends a loop of links; 40 levels bound the walk alike.
void directories_below(const Environment& env, const std::string& dir, const std::string& rel, int depth,
                       GlobListings* listings, std::vector<std::string>& out) {
  if (depth >= 40) return;
  for (const std::string& name : list(env, join(dir, rel), true, false, listings)) {
    std::string sub = rel.empty() ? name : rel + "/" + name;
    out.push_back(sub);
    directories_below(env, dir, sub, depth + 1, listings, out);
  }
}

}  // namespace

std::vector<std::string> python_glob(const Environment& env, const std::string& dir, const std::string& pattern,
                                     bool recursive, GlobListings* listings) {
  // os.path.split drops the separators that end the directory part.
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::vector<std::string> dirs{recursive ? join(base, "") : base};
  if (recursive) {
    std::vector<std::string> below;
    directories_below(env, base, "", 0, listings, below);
    for (const std::string& rel : below) dirs.push_back(join(base, rel));
  }
  bool hidden = !pattern.empty() && pattern.front() == '.';
  std::vector<std::string> out;
  for (const std::string& d : dirs)
    for (const std::string& name : list(env, d, false, hidden, listings))
      if (::fnmatch(pattern.c_str(), name.c_str(), FNM_NOESCAPE) == 0) out.push_back(join(d, name));
  return out;
}

std::optional<std::string> find_on_path(const Environment& env, std::string_view path, const std::string& name) {
  while (true) {
    size_t colon = path.find(':');
    std::string dir(path.substr(0, colon));
    if (dir.empty() || dir.front() != '/') return std::nullopt;
    std::string file = join(dir, name);
    if (path_exists(env, file)) {
      // A directory or a file without execute permission there: execvp goes on and then raises
      // EACCES, sh says "Permission denied"; neither is modelled.
      std::error_code ec;
      fs::perms perms = fs::status(env.host(file), ec).permissions();
      bool executable =
          !ec && (perms & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) != fs::perms::none;
      if (path_is_dir(env, file) || !executable) return std::nullopt;
      return file;
    }
    if (colon == std::string_view::npos) return "";
    path.remove_prefix(colon + 1);
  }
}

}  // namespace envdoctor::imports
