// The image cache's upkeep: which entries a process uses, how large each is, and eviction.
//
// An entry is a layer (layers/<key>/, layer.h) or a composed root (roots/<key>/, compose.h).
// Each has a marker file, written before the entry is renamed into place (layers/<key>/entry,
// roots/<key>.entry): its size on disk in bytes (blocks allocated; a root counts only what its
// hard links to layer files do not share), for a root the keys of its layers, and, as its mtime,
// when it was last used. A process that uses an entry holds a shared flock(2) on its marker for
// as long as it lives (CacheLease), taken before the entry is read and, for an entry it writes,
// before the rename makes it visible; and it touches the marker, so eviction knows the least
// recently used.
//
// Eviction (after an image's root is in place) runs under an exclusive flock of the cache's
// `lock` file, so that two processes never evict at once, and removes entries oldest-used first
// until the cache is at its bound again. An entry it cannot lock exclusively without waiting is
// in use, by this process or another, and is kept; a layer goes with every root made of it (a
// root's hard links would keep its files' blocks). A reader that finds its entry's marker gone
// once it holds it reads the image again. The bound is ENVDOCTOR_CACHE_MAX (bytes, or with K, M,
// G, T: powers of 1024; 0 keeps everything), by default 20 GiB.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/types.h"

namespace envdoctor::image {

// The markers this process holds, each with a shared flock until the lease is destroyed.
class CacheLease {
 public:
  CacheLease() = default;
  CacheLease(const CacheLease&) = delete;
  CacheLease& operator=(const CacheLease&) = delete;
  ~CacheLease();

  // Holds the marker at `path` and touches it: false when there is none (the entry is gone, or
  // was never complete).
  bool hold(const std::string& path);
  // Writes a marker at `path` (a new entry's, before its rename) and holds it; false on an error.
  bool create(const std::string& path, const std::string& text);

 private:
  std::mutex mutex_;  // layers are read on several threads
  std::vector<int> fds_;
};

// Held while a new entry is renamed into place: a shared flock of the cache's `lock`, which
// eviction holds exclusively, so that no entry appears while an eviction removes one of its name.
class CacheWriteLock {
 public:
  explicit CacheWriteLock(const std::string& cache);
  CacheWriteLock(const CacheWriteLock&) = delete;
  CacheWriteLock& operator=(const CacheWriteLock&) = delete;
  ~CacheWriteLock();

 private:
  int fd_ = -1;
};

// Writes a new entry's marker at `path`, held by `lease` when there is one; false on an error.
bool write_marker(const std::string& path, const std::string& text, CacheLease* lease);

// An entry's marker text: its size, then one line per layer key (a root's).
std::string marker_text(u64 bytes, const std::vector<std::string>& layers = {});

// Bytes allocated below `dir` (st_blocks), each inode once; with `shared_files` false, regular
// files with other links elsewhere (a root's links to its layers' files) are not counted.
u64 disk_bytes(const std::string& dir, bool shared_files);

// ENVDOCTOR_CACHE_MAX read: nullopt with `error` set when it is not a size.
std::optional<u64> cache_bound(std::string* error);
// "20G", "512M", "1048576": nullopt when not a size.
std::optional<u64> parse_size(const std::string& text);

struct Eviction {
  u64 before = 0, after = 0;         // the entries' bytes
  std::vector<std::string> evicted;  // "layers/KEY", "roots/KEY", oldest first
};

// Removes least recently used entries until those left hold at most `bound` bytes (0: none
// removed), never one in use.
Eviction evict(const std::string& cache, u64 bound);

}  // namespace envdoctor::image
