// The input log: a registry of open scopes that every noted path goes to. The paths are made
// absolute and resolved with raw system calls (syscall(2)), which the interposer does not see, so
// the log never notes itself.
#include "support/input_log.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace envdoctor::support {

struct InputScope::State {
  std::string ignored;
  std::string cwd;
  std::unordered_map<std::string, bool> paths;  // path -> opened
  std::string opaque;
};

namespace {

std::mutex registry_mu;
std::vector<InputScope::State*> active;  // guarded by registry_mu
std::atomic<int> active_count{0};
std::atomic<bool> installed{false};
thread_local bool noting = false;  // inside the log: what it calls itself is not noted
thread_local bool child_noted = false;

// Paths that are not files with identities, whatever they read.
bool excluded(std::string_view path) {
  for (std::string_view prefix : {"/proc", "/sys", "/dev"})
    if (path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/')) return true;
  return false;
}

std::string raw_cwd() {
  char buf[4096];
  long n = ::syscall(SYS_getcwd, buf, sizeof buf);
  return n > 0 ? std::string(buf) : std::string();
}

bool raw_lstat(const std::string& path, struct stat& st) {
  return ::syscall(SYS_newfstatat, AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::optional<std::string> raw_readlink(const std::string& path) {
  char buf[4096];
  long n = ::syscall(SYS_readlinkat, AT_FDCWD, path.c_str(), buf, sizeof buf);
  if (n < 0 || static_cast<size_t>(n) >= sizeof buf) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

// Gives `path` (absolute) to every open scope.
void record(const std::string& path, bool opened = false) {
  if (excluded(path)) return;
  std::lock_guard lock(registry_mu);
  for (InputScope::State* s : active) {
    if (!s->ignored.empty() && path.starts_with(s->ignored)) continue;
    s->paths[path] |= opened;
  }
}

// `path` made absolute against the first open scope's working directory (the process does not
// change its own).
std::string absolute(std::string_view path) {
  if (path.starts_with('/')) return std::string(path);
  std::string cwd;
  {
    std::lock_guard lock(registry_mu);
    if (!active.empty()) cwd = active.front()->cwd;
  }
  return cwd + "/" + std::string(path);
}

struct Noting {
  bool was = noting;
  Noting() { noting = true; }
  ~Noting() { noting = was; }
};

bool quiet() { return active_count.load(std::memory_order_relaxed) == 0 || noting; }

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

void note_input(const char* path, bool opened) {
  if (quiet() || path == nullptr || *path == '\0') return;
  Noting n;
  record(absolute(path), opened);
}

void note_input_at(int dirfd, const char* path, bool opened) {
  if (quiet() || path == nullptr || *path == '\0') return;
  if (dirfd == AT_FDCWD || *path == '/') return note_input(path, opened);
  Noting n;
  std::optional<std::string> dir = raw_readlink("/proc/self/fd/" + std::to_string(dirfd));
  if (!dir || !dir->starts_with('/')) return note_opaque_input("a path relative to a descriptor that names no path");
  record(*dir + "/" + path, opened);
}

void note_resolution(const char* path) {
  if (quiet() || path == nullptr || *path == '\0') return;
  Noting n;
  std::string rest = absolute(path);
  std::string at;  // resolved so far, without a trailing slash ("" is the root)
  for (int links = 0; !rest.empty();) {
    size_t start = rest.find_first_not_of('/');
    if (start == std::string::npos) break;
    size_t end = rest.find('/', start);
    std::string part = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
    rest = end == std::string::npos ? "" : rest.substr(end);
    if (part == ".") continue;
    if (part == "..") {
      at = at.empty() ? "" : parent_of(at);
      if (at == "/") at.clear();
      continue;
    }
    std::string next = at + "/" + part;
    record(next);
    struct stat st;
    if (!raw_lstat(next, st)) return;  // the rest is not there: `next` noted as missing
    if (!S_ISLNK(st.st_mode)) {
      at = next;
      continue;
    }
    std::optional<std::string> target = raw_readlink(next);
    if (!target || ++links > 40) return;  // ELOOP, as the resolution itself ends
    rest = *target + rest;
    if (target->starts_with('/')) at.clear();
  }
}

void note_glob(const char* pattern) {
  if (quiet() || pattern == nullptr || *pattern == '\0') return;
  Noting n;
  std::string p = absolute(pattern);
  // Each level with a wildcard is a listing of the directories the levels above it match.
  size_t from = 0;
  while (true) {
    size_t wild = p.find_first_of("*?[", from);
    if (wild == std::string::npos) return;
    size_t dir_end = p.rfind('/', wild);
    std::string dirs = dir_end == 0 ? "/" : p.substr(0, dir_end);
    if (dirs.find_first_of("*?[") == std::string::npos) {
      record(dirs, true);
    } else {
      glob_t gl{};
      if (::glob(dirs.c_str(), GLOB_ONLYDIR | GLOB_NOSORT, nullptr, &gl) == 0)
        for (size_t i = 0; i < gl.gl_pathc; ++i) record(gl.gl_pathv[i], true);
      ::globfree(&gl);
    }
    size_t next = p.find('/', wild);
    if (next == std::string::npos) return;
    from = next;
  }
}

void note_opaque_input(const std::string& why) {
  if (active_count.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(registry_mu);
  for (InputScope::State* s : active)
    if (s->opaque.empty()) s->opaque = why;
}

void note_direct_output(int fd) {
  if (quiet()) return;
  note_opaque_input(std::string("it wrote to ") + (fd == 1 ? "stdout" : "stderr") + " past std::cout and std::cerr");
}

bool input_log_installed() { return installed.load(); }
void mark_input_log_installed() { installed.store(true); }

bool child_inputs_noted() { return child_noted; }
ChildInputsNoted::ChildInputsNoted() : before_(child_noted) { child_noted = true; }
ChildInputsNoted::~ChildInputsNoted() { child_noted = before_; }

InputScope::InputScope(std::string ignored) : state_(std::make_unique<State>()) {
  state_->ignored = std::move(ignored);
  state_->cwd = raw_cwd();
  std::lock_guard lock(registry_mu);
  active.push_back(state_.get());
  active_count.fetch_add(1);
}

InputScope::~InputScope() {
  std::lock_guard lock(registry_mu);
  active.erase(std::find(active.begin(), active.end(), state_.get()));
  active_count.fetch_sub(1);
}

std::vector<InputScope::Noted> InputScope::paths() const {
  std::lock_guard lock(registry_mu);
  std::vector<Noted> out;
  out.reserve(state_->paths.size());
  for (const auto& [path, opened] : state_->paths) out.push_back({path, opened});
  std::sort(out.begin(), out.end(), [](const Noted& a, const Noted& b) { return a.path < b.path; });
  return out;
}

std::string InputScope::opaque() const {
  std::lock_guard lock(registry_mu);
  return state_->opaque;
}

}  // namespace envdoctor::support
