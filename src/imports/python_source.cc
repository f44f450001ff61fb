#include "imports/python_source.h"

#include <fnmatch.h>

#include <cinttypes>
#include <cstdio>
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

namespace {

// print_entry's words for an entry's flags (elf/cache.c): the type (FLAG_TYPE_MASK), then the
// architecture (FLAG_REQUIRED_MASK, FLAG_SPARC_LIB64 = 0x0100 to FLAG_LARCH_FLOAT_ABI_DOUBLE =
// 0x1200, indexed by the flag >> 8), or the bits' value where glibc names none.
std::string cache_flags_words(i64 flags) {
  static const char* const kType[] = {"libc4", "ELF", "libc5", "libc6"};
  static const char* const kRequired[] = {"",
                                          ",64bit",
                                          ",IA-64",
                                          ",x86-64",
                                          ",64bit",
                                          ",64bit",
                                          ",N32",
                                          ",64bit",
                                          ",x32",
                                          ",hard-float",
                                          ",AArch64",
                                          ",soft-float",
                                          ",nan2008",
                                          ",N32,nan2008",
                                          ",64bit,nan2008",
                                          ",soft-float",
                                          ",double-float",
                                          ",soft-float",
                                          ",double-float"};
  i64 type = flags & 0xff, required = (flags & 0xff00) >> 8;
  std::string out = type < 4 ? kType[type] : "unknown";
  if (required < static_cast<i64>(std::size(kRequired))) out += kRequired[required];
  else out += "," + std::to_string(flags & 0xff00);
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> ldconfig_print(const loader::LoaderConfig& config) {
  const std::shared_ptr<const loader::LdCache>& cache = config.cache;
  if (!cache) {
    // An empty file is read as one without entries, and ldconfig prints nothing (print_cache).
    std::error_code ec;
    uintmax_t size = fs::file_size(config.root + config.cache_path, ec);
    return !ec && size == 0 ? std::optional<std::vector<std::string>>(std::vector<std::string>{}) : std::nullopt;
  }
  std::vector<std::string> out;
  out.push_back(std::to_string(cache->entries().size()) + " libs found in cache `" + config.cache_path + "'");
  for (const loader::LdCacheEntry& e : cache->entries()) {
    std::string line = "\t";
    line.append(e.key).append(" (").append(cache_flags_words(e.flags));
    if (e.hwcaps_subdir && !e.hwcaps_subdir->empty()) {  // an index past the table prints the bits
      line.append(", hwcap: \"").append(*e.hwcaps_subdir).append("\"");
    } else if (e.hwcap != 0) {
      char bits[32];
      std::snprintf(bits, sizeof bits, "%#.16" PRIx64, e.hwcap);
      line.append(", hwcap: ").append(bits);
    }
    out.push_back(line.append(") => ").append(e.value));
  }
  if (std::optional<std::string_view> generator = cache->generator())
    out.push_back(std::string("Cache generated by: ").append(*generator));
  return out;
}

}  // namespace envdoctor::imports
