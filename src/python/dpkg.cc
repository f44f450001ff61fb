#include "python/dpkg.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "support/parallel.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

namespace {

// The whole of a small file in one read: a machine's dpkg lists are a few thousand files of a
// few kilobytes, and a stream's line-by-line reads cost more than the disk does.
std::string read_whole(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (64 << 20)) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
  }
  ::close(fd);
  return out;
}

}  // namespace

void DpkgIndex::load() const {
  loaded_ = true;
  std::error_code ec;
  fs::path info = fs::path(root_ + "/var/lib/dpkg/info");
  std::vector<std::string> list_paths;
  for (fs::directory_iterator it(info, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".list") list_paths.push_back(it->path().string());
  // Read with many requests in flight: with a cold cache each small file is a wait on the disk,
  // and one after another they held a cold `check` up for 110 ms.
  std::vector<std::string> texts(list_paths.size());
  support::parallel_for(
      list_paths.size(), [&](size_t i) { texts[i] = read_whole(list_paths[i]); },
      support::io_bound_threads(list_paths.size()));
  std::unordered_map<std::string, u32> index;
  for (size_t i = 0; i < list_paths.size(); ++i) {
    // "libstdc++6:amd64.list" -> "libstdc++6".
    std::string stem = fs::path(list_paths[i]).stem().string();
    std::string name = stem.substr(0, stem.find(':'));
    auto [slot, fresh] = index.try_emplace(name, static_cast<u32>(packages_.size()));
    if (fresh) {
      packages_.push_back(name);
      info_stems_.push_back(stem);
    }
    // Every line is indexed, as `dpkg -S` would find it: picking lines by their look (".so",
    // "-packages/") costs more than indexing them all.
    std::string_view text = lists_.emplace_back(std::move(texts[i]));
    while (!text.empty()) {
      size_t end = std::min(text.find('\n'), text.size());
      if (end) lines_.push_back({text.substr(0, end), 0, slot->second});
      text.remove_prefix(std::min(end + 1, text.size()));
    }
  }
  index_lines();
  std::string status = read_whole(root_ + "/var/lib/dpkg/status");
  std::string package;
  for (std::string_view rest = status; !rest.empty();) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.starts_with("Package: ")) package = line.substr(9);
    else if (line.starts_with("Version: ") && !package.empty()) versions_.emplace(package, line.substr(9));
    else if (line.empty()) package.clear();
  }
  load_diversions();
}

// /var/lib/dpkg/diversions: three lines per diversion (the path, where it was moved, the package
// that diverted it, or ":" for a local one). dpkg installs a diverted path of any other package
// at the moved-to path (dpkg-divert(1)).
void DpkgIndex::load_diversions() const {
  std::ifstream in(root_ + "/var/lib/dpkg/diversions");
  std::string from, to, by;
  while (std::getline(in, from) && std::getline(in, to) && std::getline(in, by))
    diversions_.emplace(std::move(from), std::make_pair(std::move(to), std::move(by)));
}

bool DpkgIndex::loaded() const {
  std::lock_guard lock(mu_);
  return loaded_;
}

void DpkgIndex::prefetch() const {
  std::lock_guard lock(mu_);
  if (!loaded_) load();
}

std::optional<DpkgPackage> DpkgIndex::package(u32 index) const {
  DpkgPackage pkg{packages_[index], ""};
  if (auto v = versions_.find(pkg.name); v != versions_.end()) pkg.version = v->second;
  return pkg;
}

void DpkgIndex::index_lines() const {
  size_t size = 64;
  while (size < lines_.size() * 2) size *= 2;
  slots_.assign(size, kEmpty);
  for (u32 i = 0; i < lines_.size(); ++i) {
    Line& line = lines_[i];
    line.hash = std::hash<std::string_view>{}(line.path);
    size_t at = line.hash & (size - 1);
    // A path two packages list (a shared directory) belongs to the first list read.
    bool seen = false;
    for (; slots_[at] != kEmpty; at = (at + 1) & (size - 1)) {
      const Line& other = lines_[slots_[at]];
      if (other.hash == line.hash && other.path == line.path) {
        seen = true;
        break;
      }
    }
    if (!seen) slots_[at] = i;
  }
}

std::optional<u32> DpkgIndex::package_of(std::string_view path) const {
  if (slots_.empty()) return std::nullopt;
  size_t hash = std::hash<std::string_view>{}(path), mask = slots_.size() - 1;
  for (size_t at = hash & mask; slots_[at] != kEmpty; at = (at + 1) & mask) {
    const Line& line = lines_[slots_[at]];
    if (line.hash == hash && line.path == path) return line.package;
  }
  return std::nullopt;
}

std::optional<DpkgPackage> DpkgIndex::owner(const std::string& path) const {
  std::lock_guard lock(mu_);
  if (!loaded_) load();
  std::optional<u32> found = package_of(path);
  if (!found) {
    // Merged /usr: the database says /lib/x86_64-linux-gnu/libc.so.6 or /usr/lib/..., the loader
    // may say the other; try the directory with its links resolved, and the two spellings.
    std::error_code ec;
    fs::path p(path);
    fs::path dir = fs::canonical(root_ + p.parent_path().string(), ec);
    std::string candidates[] = {
        ec ? std::string() : (dir / p.filename()).string().substr(root_.size()),
        path.rfind("/usr/", 0) == 0 ? path.substr(4) : "/usr" + path,
    };
    for (const std::string& c : candidates) {
      if (c.empty()) continue;
      found = package_of(c);
      if (found) break;
    }
    if (!found) return std::nullopt;
  }
  return package(*found);
}

std::vector<std::pair<std::string, DpkgPackage>> DpkgIndex::files_named(std::string_view name) const {
  std::vector<std::pair<std::string, DpkgPackage>> out;
  if (name.empty() || name.find('/') != std::string_view::npos) return out;
  std::lock_guard lock(mu_);
  if (!loaded_) load();
  auto [known, fresh] = named_.try_emplace(std::string(name));
  if (!fresh) return known->second;
  for (const Line& line : lines_) {
    std::string_view p = line.path;
    if (p.size() > name.size() && p.ends_with(name) && p[p.size() - name.size() - 1] == '/')
      if (std::optional<DpkgPackage> pkg = package(line.package)) out.emplace_back(std::string(p), std::move(*pkg));
  }
  known->second = out;
  return out;
}

std::vector<DpkgFile> DpkgIndex::files(const std::string& package) const {
  std::string stem;
  {
    std::lock_guard lock(mu_);
    if (!loaded_) load();
    for (size_t i = 0; i < packages_.size(); ++i)
      if (packages_[i] == package) stem = info_stems_[i];
  }
  if (stem.empty()) return {};
  std::vector<DpkgFile> out;
  std::ifstream in(root_ + "/var/lib/dpkg/info/" + stem + ".md5sums");
  // "<32 hex digits>  <path without its leading slash>"
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 35 || line[32] != ' ' || line[33] != ' ') continue;
    DpkgFile f{"/" + line.substr(34), line.substr(0, 32)};
    if (auto d = diversions_.find(f.path); d != diversions_.end() && d->second.second != package)
      f.path = d->second.first;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::python
