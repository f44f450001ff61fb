// /etc/ld.so.cache, read as glibc's elf/dl-cache.c reads it.
//
// Three layouts exist: the old one ("ld.so-1.7.0", 12-byte entries, strings after the entries),
// the new one ("glibc-ld.so.cache1.1", 24-byte entries with an hwcap word, strings addressed from
// the start of the new header, and an extension area naming the glibc-hwcaps subdirectories),
// and the combined one (an old header and entries followed by a new header), in which glibc uses
// the new part. Every entry is kept, in file order, grouped by key; lookup applies glibc's
// selection: the flags must be this architecture's, glibc-hwcaps entries compete by priority and
// come before the plain entry, which ends the search.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elf/mapped_file.h"

namespace envdoctor::loader {

struct LdCacheEntry {
  i64 flags = 0;
  std::string_view key;    // the SONAME
  std::string_view value;  // the path
  u64 hwcap = 0;
  // For an entry of a glibc-hwcaps subdirectory: that subdirectory's name ("x86-64-v3").
  std::optional<std::string_view> hwcaps_subdir;
};

class LdCache {
 public:
  // Reads `bytes` (kept alive by `file`). Returns nullptr with `error` set for a file that glibc
  // would not use (bad magic, truncated tables); glibc then searches without a cache.
  static std::unique_ptr<LdCache> parse(std::shared_ptr<const MappedFile> file, std::string* error);
  static std::unique_ptr<LdCache> load(const std::string& path, std::string* error);

  enum class Format { kOld, kNew, kCombined };
  Format format() const { return format_; }
  const std::vector<LdCacheEntry>& entries() const { return entries_; }

  // The path glibc's search_cache returns for `soname`. `flags` is the architecture's cache
  // flag word (see cache_flags_for_machine); `active_hwcaps` the glibc-hwcaps subdirectories
  // this CPU supports, most preferred first.
  std::optional<std::string_view> lookup(std::string_view soname, i64 flags,
                                         const std::vector<std::string>& active_hwcaps) const;

 private:
  LdCache() = default;
  std::shared_ptr<const MappedFile> file_;
  Format format_ = Format::kNew;
  std::vector<LdCacheEntry> entries_;
  std::unordered_map<std::string_view, std::vector<u32>> by_key_;
};

// The flag word ldconfig writes for libraries of this ELF machine and class (FLAG_ELF_LIBC6
// plus the architecture's bits), as glibc's _DL_CACHE_DEFAULT_ID; nullopt when unknown.
std::optional<i64> cache_flags_for_machine(u16 machine, bool is_64);
// Whether ld.so of the architecture whose cache word is `wanted` takes an entry filed with
// `entry`.
bool cache_flags_accepted(i64 entry, i64 wanted);

}  // namespace envdoctor::loader
