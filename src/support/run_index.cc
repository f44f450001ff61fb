#include "support/run_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "support/parallel.h"
#include "support/xdg.h"

namespace envdoctor::support {

namespace {

namespace fs = std::filesystem;

// The entry file: this header, the payload's length and FNV-1a checksum, then the payload.
constexpr std::string_view kMagic = "envdoctor index 1\n";
constexpr i64 kTrustAfterNs = 1'000'000'000;  // an input changed within this of the run's start is not trusted

u64 fnv1a(std::string_view bytes) {
  u64 h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  void u(u64 v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void s(std::string_view text) {
    u(text.size());
    out_.append(text);
  }
  void id(const Identity& i) {
    u(static_cast<u64>(i.error));
    u(i.mode);
    u(i.dev);
    u(i.ino);
    u(i.size);
    u(static_cast<u64>(i.mtime_ns));
    u(static_cast<u64>(i.ctime_ns));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Writer wrote; every read is checked against the bytes left, and a failed one
// leaves the reader failed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : in_(bytes) {}
  bool ok() const { return ok_; }
  bool done() const { return in_.empty(); }
  u64 u() {
    u64 v = 0;
    if (in_.size() < sizeof v) return fail();
    std::memcpy(&v, in_.data(), sizeof v);
    in_.remove_prefix(sizeof v);
    return v;
  }
  std::string s() {
    u64 n = u();
    if (!ok_ || n > in_.size()) return fail(), std::string();
    std::string text(in_.substr(0, n));
    in_.remove_prefix(n);
    return text;
  }
  Identity id() {
    Identity i;
    i.error = static_cast<int>(u());
    i.mode = static_cast<u32>(u());
    i.dev = u();
    i.ino = u();
    i.size = u();
    i.mtime_ns = static_cast<i64>(u());
    i.ctime_ns = static_cast<i64>(u());
    return i;
  }

 private:
  u64 fail() {
    ok_ = false;
    in_ = {};
    return 0;
  }
  std::string_view in_;
  bool ok_ = true;
};

i64 ns(const struct timespec& t) { return static_cast<i64>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// Two identities of one path are the same input: every field, or without the times for a
// directory whose listing is not an input.
bool alike(const Identity& now, const Identity& then, bool times) {
  if (times || !S_ISDIR(then.mode)) return now == then;
  return now.error == then.error && now.mode == then.mode && now.dev == then.dev && now.ino == then.ino;
}

// The inputs less each missing path whose directory is an input too: a name cannot appear in a
// directory without changing the directory's modification time (nor in a missing directory
// without the directory appearing first), so the directory's identity answers for the name.
std::vector<IndexInput> without_implied(std::vector<IndexInput> inputs) {
  std::unordered_map<std::string_view, bool> dirs;  // an input that is a directory (true) or missing (false)
  for (const IndexInput& in : inputs) {
    const Identity& i = in.target ? *in.target : in.self;
    if (i.error == 0 && S_ISDIR(i.mode) && in.times) dirs.emplace(in.path, true);
    if (in.self.error == ENOENT) dirs.emplace(in.path, false);
  }
  std::vector<bool> implied(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string& path = inputs[k].path;
    size_t slash = path.rfind('/');
    implied[k] = inputs[k].self.error == ENOENT && slash != std::string::npos && slash > 0 &&
                 dirs.count(std::string_view(path).substr(0, slash)) != 0;
  }
  std::vector<IndexInput> kept;
  kept.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!implied[k]) kept.push_back(std::move(inputs[k]));
  return kept;
}

std::optional<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Raw system calls: the index's own reads are not the run's inputs.
Identity identity_of(const std::string& path, bool follow) {
  struct stat st;
  Identity i;
  if (::syscall(SYS_newfstatat, AT_FDCWD, path.c_str(), &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0) {
    i.error = errno;
    return i;
  }
  i.mode = st.st_mode;
  i.dev = st.st_dev;
  i.ino = st.st_ino;
  i.size = static_cast<u64>(st.st_size);
  i.mtime_ns = ns(st.st_mtim);
  i.ctime_ns = ns(st.st_ctim);
  return i;
}

i64 realtime_ns() {
  struct timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns(t);
}

std::string encode_entry(const IndexEntry& entry) {
  Writer w;
  w.s(entry.key);
  w.u(static_cast<u64>(entry.recorded_ns));
  w.u(static_cast<u64>(static_cast<i64>(entry.status)));
  w.s(entry.out);
  w.s(entry.err);
  w.u(entry.inputs.size());
  for (const IndexInput& in : entry.inputs) {
    w.s(in.path);
    w.id(in.self);
    w.u((in.target ? 1 : 0) | (in.times ? 2 : 0));
    if (in.target) w.id(*in.target);
  }
  w.u(entry.order.size());
  for (const OutputRun& r : entry.order) w.u((r.size << 1) | (r.err ? 1 : 0));
  std::string payload = w.take();
  Writer head;
  head.u(payload.size());
  head.u(fnv1a(payload));
  return std::string(kMagic) + head.take() + payload;
}

std::optional<IndexEntry> decode_entry(std::string_view bytes, std::string* why) {
  if (!bytes.starts_with(kMagic)) return *why = "not an index entry", std::nullopt;
  Reader head(bytes.substr(kMagic.size()));
  u64 size = head.u(), sum = head.u();
  std::string_view payload = bytes.substr(std::min(bytes.size(), kMagic.size() + 16));
  if (!head.ok() || size != payload.size())
    return *why =
               "cut short or overlong (" + std::to_string(payload.size()) + " bytes of " + std::to_string(size) + ")",
           std::nullopt;
  if (fnv1a(payload) != sum) return *why = "its checksum does not match its bytes", std::nullopt;
  Reader r(payload);
  IndexEntry e;
  e.key = r.s();
  e.recorded_ns = static_cast<i64>(r.u());
  e.status = static_cast<int>(static_cast<i64>(r.u()));
  e.out = r.s();
  e.err = r.s();
  u64 n = r.u();
  for (u64 k = 0; r.ok() && k < n; ++k) {
    IndexInput in;
    in.path = r.s();
    in.self = r.id();
    u64 flags = r.u();
    if (flags > 3) return *why = "an input's flags are not known", std::nullopt;
    if (flags & 1) in.target = r.id();
    in.times = (flags & 2) != 0;
    e.inputs.push_back(std::move(in));
  }
  u64 runs = r.u(), out = 0, err = 0;
  for (u64 k = 0; r.ok() && k < runs; ++k) {
    u64 v = r.u();
    e.order.push_back({(v & 1) != 0, v >> 1});
    (v & 1 ? err : out) += v >> 1;
  }
  if (!r.ok() || !r.done() || out != e.out.size() || err != e.err.size())
    return *why = "its fields do not add up", std::nullopt;
  return e;
}

std::optional<std::string> changed_input(const IndexEntry& entry) {
  // Each input is one or two stat calls: several threads for a large environment.
  const std::vector<IndexInput>& inputs = entry.inputs;
  std::atomic<size_t> first{inputs.size()};
  auto judge = [&](size_t i) {
    const IndexInput& in = inputs[i];
    Identity now = identity_of(in.path, false);
    bool same =
        alike(now, in.self, in.times) && (!in.target || alike(identity_of(in.path, true), *in.target, in.times));
    if (same) return;
    size_t seen = first.load();
    while (i < seen && !first.compare_exchange_weak(seen, i)) {
    }
  };
  if (inputs.size() < 2048) {
    for (size_t i = 0; i < inputs.size() && first.load() == inputs.size(); ++i) judge(i);
  } else {
    parallel_for(inputs.size(), judge);
  }
  if (first.load() == inputs.size()) return std::nullopt;
  return inputs[first.load()].path;
}

std::optional<std::vector<IndexInput>> identify_inputs(const std::vector<InputScope::Noted>& paths, i64 started_ns,
                                                       std::string* why) {
  std::vector<IndexInput> out(paths.size());
  parallel_for(paths.size(), [&](size_t i) {
    IndexInput& in = out[i];
    in.path = paths[i].path;
    in.self = identity_of(in.path, false);
    if (in.self.error == 0 && S_ISLNK(in.self.mode)) in.target = identity_of(in.path, true);
    const Identity& what = in.target ? *in.target : in.self;
    in.times = paths[i].opened || what.error != 0 || !S_ISDIR(what.mode);
  });
  out = without_implied(std::move(out));
  for (const IndexInput& in : out)
    for (const Identity* i : {&in.self, in.target ? &*in.target : nullptr}) {
      if (!i || i->error != 0 || (!in.times && S_ISDIR(i->mode))) continue;
      if (std::max(i->mtime_ns, i->ctime_ns) >= started_ns - kTrustAfterNs) {
        *why = in.path + " changed while the run read it, or just before";
        return std::nullopt;
      }
    }
  return out;
}

RunIndex::RunIndex(std::string dir, u64 max_bytes, bool in_memory)
    : dir_(std::move(dir)), max_bytes_(max_bytes), in_memory_(in_memory) {}

std::string RunIndex::standard_dir() { return xdg_base("XDG_CACHE_HOME", ".cache") + "/envdoctor/index-v1"; }

u64 RunIndex::standard_max() {
  u64 max = 256ull << 20;
  if (const char* v = std::getenv("ENVDOCTOR_INDEX_MAX"); v && *v) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end && *end == '\0') max = n;
  }
  return max;
}

std::string RunIndex::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.entry", static_cast<unsigned long long>(fnv1a(key)));
  return dir_ + "/" + name;
}

std::optional<IndexEntry> RunIndex::find(const std::string& key, std::string* note, std::string* stale) {
  auto fresh = [&](const IndexEntry& e) {
    std::optional<std::string> changed = changed_input(e);
    if (changed && stale) *stale = *changed + " changed";
    return !changed;
  };
  if (in_memory_) {
    std::lock_guard lock(mu_);
    if (auto it = held_.find(key); it != held_.end()) {
      if (fresh(it->second)) return it->second;
      held_.erase(it);
      held_order_.erase(std::find(held_order_.begin(), held_order_.end(), key));
    }
  }
  std::string path = file_for(key);
  std::optional<std::string> bytes = read_whole(path);
  if (!bytes) return std::nullopt;
  std::string why;
  std::optional<IndexEntry> entry = decode_entry(*bytes, &why);
  if (!entry) {
    *note = "the index entry " + path + " is damaged (" + why + "); it is checked afresh and written again";
    ::unlink(path.c_str());
    return std::nullopt;
  }
  if (entry->key != key || !fresh(*entry)) return std::nullopt;  // another question, or stale
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);               // recently used
  if (in_memory_) {
    std::lock_guard lock(mu_);
    hold(*entry);
  }
  return entry;
}

void RunIndex::keep(const IndexEntry& entry) {
  if (in_memory_) {
    std::lock_guard lock(mu_);
    hold(entry);
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::string path = file_for(entry.key);
  std::ostringstream suffix;
  suffix << ".tmp." << ::getpid() << "." << std::this_thread::get_id();
  std::string tmp = path + suffix.str();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << encode_entry(entry);
    out.flush();
    if (!out) {
      ::unlink(tmp.c_str());
      return;  // a cache that cannot be written is no cache, never an error
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
  bound();
}

// At most kHeld entries in memory (a server's questions; each is a few hundred kB): the one held
// longest gives way. Callers hold mu_.
void RunIndex::hold(const IndexEntry& entry) {
  constexpr size_t kHeld = 64;
  if (held_.count(entry.key) == 0 && held_.size() >= kHeld) {
    held_.erase(held_order_.front());
    held_order_.pop_front();
  }
  if (held_.count(entry.key) == 0) held_order_.push_back(entry.key);
  held_[entry.key] = entry;
}

// The least recently used entries removed until the rest fit.
void RunIndex::bound() {
  struct Kept {
    std::string path;
    u64 size;
    i64 used;
  };
  std::vector<Kept> kept;
  u64 total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    Identity i = identity_of(e.path().string(), false);
    if (i.error != 0 || !S_ISREG(i.mode)) continue;
    kept.push_back({e.path().string(), i.size, i.mtime_ns});
    total += i.size;
  }
  if (total <= max_bytes_) return;
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.used < b.used; });
  for (const Kept& k : kept) {
    if (total <= max_bytes_) break;
    if (::unlink(k.path.c_str()) == 0) total -= k.size;
  }
}

}  // namespace envdoctor::support
