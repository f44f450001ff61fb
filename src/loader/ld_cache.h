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

// The legacy hwcap bits of an ld.so.cache entry (ldconfig's path_hwcap of its directory: x86_64,
// avx512_1, haswell, xeon_phi, tls) as search_cache in glibc 2.36's elf/dl-cache.c judges them:
// an entry with a bit outside `hwcap` (GLRO(dl_hwcap) & the hwcap mask), the platform bits and
// the tls bit is skipped, and so is one whose platform bits are not `platform` (1 << the
// platform's index; all ones when the platform is none of x86-64's, which then skips them all).
struct LegacyCacheHwcaps {
  u64 hwcap = 0;
  u64 platform = ~u64{0};
};
inline constexpr u64 kCachePlatformBits = u64{0xf} << 48;  // _DL_HWCAP_PLATFORM, x86-64
inline constexpr u64 kCacheTlsBit = u64{1} << 63;          // _DL_HWCAP_TLS_MASK

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
  // A cache of `entries` in their order, as a new-format file holding them would read: the
  // views point into `strings`, which the cache keeps alive (ldconfig.h's rebuilt cache).
  static std::unique_ptr<LdCache> from_entries(std::vector<LdCacheEntry> entries, std::shared_ptr<const void> strings);

  enum class Format { kOld, kNew, kCombined };
  Format format() const { return format_; }
  const std::vector<LdCacheEntry>& entries() const { return entries_; }
  // The words of the program that wrote the cache ("ldconfig (Debian GLIBC 2.36-9+deb12u14) stable
  // release version 2.36"), where its extension area holds them.
  std::optional<std::string_view> generator() const { return generator_; }

  // The path glibc's search_cache returns for `soname`. `flags` is the architecture's cache
  // flag word (see cache_flags_for_machine); `active_hwcaps` the glibc-hwcaps subdirectories
  // this CPU supports, most preferred first; `legacy` what a plain entry's legacy hwcap bits are
  // compared with.
  std::optional<std::string_view> lookup(std::string_view soname, i64 flags,
                                         const std::vector<std::string>& active_hwcaps,
                                         const struct LegacyCacheHwcaps& legacy) const;

 private:
  LdCache() = default;
  std::shared_ptr<const MappedFile> file_;
  std::shared_ptr<const void> strings_;
  Format format_ = Format::kNew;
  std::vector<LdCacheEntry> entries_;
  std::optional<std::string_view> generator_;
  std::unordered_map<std::string_view, std::vector<u32>> by_key_;
};

// The flag word ldconfig writes for libraries of this ELF machine and class (FLAG_ELF_LIBC6
// plus the architecture's bits), as glibc's _DL_CACHE_DEFAULT_ID; nullopt when unknown.
std::optional<i64> cache_flags_for_machine(u16 machine, bool is_64);
// Whether ld.so of the architecture whose cache word is `wanted` takes an entry filed with
// `entry`.
bool cache_flags_accepted(i64 entry, i64 wanted);

}  // namespace envdoctor::loader
