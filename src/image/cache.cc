#include "image/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace envdoctor::image {

namespace {

namespace fs = std::filesystem;

constexpr u64 kDefaultBound = u64{20} << 30;

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Whether `fd` is still the file at `path` (not unlinked by an eviction meanwhile).
bool still_there(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// One entry as eviction sees it.
struct Entry {
  std::string name;                // "layers/KEY" or "roots/KEY"
  std::string marker;              // its marker file
  std::vector<std::string> paths;  // what removing it removes
  u64 bytes = 0;
  std::vector<std::string> layers;  // a root's
  i64 used = 0;                     // the marker's mtime, in nanoseconds
};

std::optional<Entry> read_entry(const std::string& name, const std::string& marker, std::vector<std::string> paths) {
  struct stat st;
  if (::stat(marker.c_str(), &st) != 0) return std::nullopt;
  std::ifstream in(marker);
  Entry e;
  e.name = name;
  e.marker = marker;
  e.paths = std::move(paths);
  e.used = static_cast<i64>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  e.bytes = std::strtoull(line.c_str(), nullptr, 10);
  while (std::getline(in, line))
    if (!line.empty()) e.layers.push_back(line);
  return e;
}

std::vector<Entry> entries_of(const std::string& cache) {
  std::vector<Entry> out;
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator(cache + "/layers", ec)) {
    std::string key = d.path().filename().string();
    if (key.starts_with(".")) continue;  // a layer being written
    if (auto e = read_entry("layers/" + key, d.path().string() + "/entry", {d.path().string()}))
      out.push_back(std::move(*e));
  }
  for (const fs::directory_entry& d : fs::directory_iterator(cache + "/roots", ec)) {
    std::string key = d.path().filename().string();
    if (key.starts_with(".") || !d.is_directory(ec)) continue;
    std::string base = d.path().string();
    if (auto e = read_entry("roots/" + key, base + ".entry", {base, base + ".problems", base + ".entry"}))
      out.push_back(std::move(*e));
  }
  return out;
}

// Removes `e` when no process holds it: its marker locked exclusively without waiting, then
// unlinked last, so that a reader that was waiting for it finds it gone.
bool remove_entry(const Entry& e) {
  Fd f(::open(e.marker.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0 || ::flock(f.fd, LOCK_EX | LOCK_NB) != 0 || !still_there(f.fd, e.marker)) return false;
  std::error_code ec;
  // The marker goes first: from then on no reader takes the entry for complete.
  ::unlink(e.marker.c_str());
  for (const std::string& p : e.paths) fs::remove_all(p, ec);
  return true;
}

}  // namespace

CacheLease::~CacheLease() {
  for (int fd : fds_) ::close(fd);
}

bool CacheLease::hold(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // Waits while an eviction removes it, then finds it gone.
  if (::flock(fd, LOCK_SH) != 0 || !still_there(fd, path)) {
    ::close(fd);
    return false;
  }
  ::futimens(fd, nullptr);  // used now: mtime and atime (a read-only cache leaves them be)
  std::lock_guard<std::mutex> guard(mutex_);
  fds_.push_back(fd);
  return true;
}

bool CacheLease::create(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::flock(fd, LOCK_SH) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok) {
    ::close(fd);
    return false;
  }
  fds_.push_back(fd);
  return true;
}

CacheWriteLock::CacheWriteLock(const std::string& cache) {
  fd_ = ::open((cache + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ >= 0) ::flock(fd_, LOCK_SH);
}

CacheWriteLock::~CacheWriteLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool write_marker(const std::string& path, const std::string& text, CacheLease* lease) {
  if (lease) return lease->create(path, text);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string marker_text(u64 bytes, const std::vector<std::string>& layers) {
  std::string out = std::to_string(bytes) + "\n";
  for (const std::string& l : layers) out += l + "\n";
  return out;
}

u64 disk_bytes(const std::string& dir, bool shared_files) {
  std::set<std::pair<dev_t, ino_t>> seen;
  u64 total = 0;
  auto count = [&](const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return;
    if (S_ISREG(st.st_mode) && !shared_files && st.st_nlink > 1) return;
    if (seen.insert({st.st_dev, st.st_ino}).second) total += static_cast<u64>(st.st_blocks) * 512;
  };
  count(dir);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec))
    count(it->path().string());
  return total;
}

std::optional<u64> parse_size(const std::string& text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (errno) return std::nullopt;
  std::string unit(end);
  if (unit.ends_with("iB")) unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'B') unit.resize(1);
  int shift = unit.empty() ? 0 : -1;
  if (unit.size() == 1) {
    const std::string units = "KMGT";
    size_t at = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
    if (at != std::string::npos) shift = 10 * static_cast<int>(at + 1);
  }
  if (shift < 0 || (shift > 0 && n > (~u64{0} >> shift))) return std::nullopt;
  return static_cast<u64>(n) << shift;
}

std::optional<u64> cache_bound(std::string* error) {
  const char* value = std::getenv("ENVDOCTOR_CACHE_MAX");
  if (!value || !*value) return kDefaultBound;
  std::optional<u64> bound = parse_size(value);
  if (!bound)
    *error = std::string("ENVDOCTOR_CACHE_MAX=") + value +
             ": not a size (bytes, or a number with K, M, G or T; 0 keeps everything)";
  return bound;
}

Eviction evict(const std::string& cache, u64 bound) {
  Eviction out;
  Fd lock(::open((cache + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0) return out;
  std::vector<Entry> entries = entries_of(cache);
  for (const Entry& e : entries) out.before += e.bytes;
  out.after = out.before;
  if (bound == 0 || out.before <= bound) return out;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used != b.used ? a.used < b.used : a.name < b.name; });
  std::set<std::string> gone;
  for (const Entry& e : entries) {
    if (out.after <= bound) break;
    if (gone.count(e.name)) continue;
    // A layer goes with the roots made of it, or not at all.
    std::vector<const Entry*> with = {&e};
    if (e.name.starts_with("layers/"))
      for (const Entry& r : entries)
        if (!gone.count(r.name) && std::count(r.layers.begin(), r.layers.end(), e.name.substr(7))) with.push_back(&r);
    bool removed = true;
    for (auto it = with.rbegin(); it != with.rend() && removed; ++it) {
      removed = remove_entry(**it);
      if (!removed) continue;
      gone.insert((*it)->name);
      out.after -= std::min(out.after, (*it)->bytes);
      out.evicted.push_back((*it)->name);
    }
  }
  return out;
}

}  // namespace envdoctor::image
