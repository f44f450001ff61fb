// The facts of the loader that do not depend on any one object: where the system libraries
// live, which glibc-hwcaps and legacy subdirectories this CPU makes ld.so try, what $LIB and
// $PLATFORM expand to, LD_LIBRARY_PATH, the ld.so.cache, and the root file system they are read
// from. Plus the rules for turning an RPATH/RUNPATH/LD_LIBRARY_PATH string into directories
// (glibc elf/dl-load.c: fillin_rpath, expand_dynamic_string_token).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/ld_cache.h"
#include "support/types.h"

namespace envdoctor::loader {

struct LoaderConfig {
  // Another root file system ("" for this machine's): every absolute path the loader opens is
  // read below it, and paths are reported as the loader inside it would see them.
  std::string root;

  // System search path (Debian 12 x86_64, `ld.so --help`), in order.
  std::vector<std::string> default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};

  // Subdirectories tried inside every search directory before the directory itself, most
  // preferred first: glibc-hwcaps/x86-64-vN for the levels this CPU has, then glibc 2.36's legacy
  // subdirectories (tls, the platform, the hwcap strings: legacy_subdirs). Empty for none.
  std::vector<std::string> subdirs;
  // The glibc-hwcaps names alone ("x86-64-v3"), for ld.so.cache's hwcaps entries.
  std::vector<std::string> hwcaps;

  std::string dst_lib = "lib/x86_64-linux-gnu";  // $LIB
  std::string dst_platform = "x86_64";           // $PLATFORM: LegacyHwcaps::platform ("": unknown)

  std::string ld_library_path;  // raw, as in the environment
  // What ld.so loads before the main program's dependencies (loader/preload.h): LD_PRELOAD, raw,
  // as in the environment, and the contents of /etc/ld.so.preload (nullopt: no such file).
  std::string ld_preload;
  std::optional<std::string> ld_so_preload;
  // GLIBC_TUNABLES, raw, as in the environment: the rtld tunables that size static TLS
  // (loader/static_tls.h).
  std::string glibc_tunables;

  std::string interpreter = "/lib64/ld-linux-x86-64.so.2";  // for objects without PT_INTERP

  std::shared_ptr<const LdCache> cache;  // null: no usable cache
  LegacyCacheHwcaps cache_hwcaps;        // what the cache's legacy hwcap entries are judged by
  std::string cache_path = "/etc/ld.so.cache";

  // The working directory relative paths are taken from ($ORIGIN of "./x", empty RPATH
  // elements); defaults to the process's own.
  std::string cwd;

  // The configuration of this machine (or of `root`): hwcaps levels from this CPU, the cache,
  // /etc/ld.so.preload.
  static LoaderConfig for_host(const std::string& root = "");
  // What Debian's i386 loader (/lib/ld-linux.so.2, multiarch) uses where `host` is the x86_64
  // one's: its own default directories, $LIB and $PLATFORM, and no x86-64 hwcaps subdirectories;
  // the cache, LD_LIBRARY_PATH and root stay.
  static LoaderConfig for_i386(const LoaderConfig& host);
};

// The CPU as glibc 2.36's init_cpu_features sees it (sysdeps/x86/cpu-features.c): CPUID's bits,
// with AVX (and what needs its registers: AVX2, FMA, F16C) and AVX-512 usable only where the OS
// saves their state (XCR0), as CPU_FEATURE_USABLE_P says.
struct CpuFeatures {
  bool intel = false;  // arch_kind_intel: "GenuineIntel"
  bool sse3 = false, ssse3 = false, sse4_1 = false, sse4_2 = false, popcnt = false, cx16 = false, lahf = false;
  bool avx = false, avx2 = false, bmi1 = false, bmi2 = false, f16c = false, fma = false, lzcnt = false, movbe = false;
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false, avx512er = false,
       avx512pf = false;

  static const CpuFeatures& of_this_cpu();  // read once
};

// The glibc-hwcaps levels a CPU supports, best first: {"x86-64-v4", "x86-64-v3", ...}
// (sysdeps/x86/get-isa-level.h).
std::vector<std::string> supported_x86_64_levels(const CpuFeatures& cpu);
std::vector<std::string> supported_x86_64_levels();  // this CPU's

// sysdeps/x86/dl-hwcap.h: the legacy hwcap bits of x86_64 and the mask that selects the ones
// that name subdirectories, the default of glibc.cpu.hwcap_mask (HWCAP_IMPORTANT).
inline constexpr u64 kHwcapX86_64 = u64{1} << 1;
inline constexpr u64 kHwcapX86Avx512_1 = u64{1} << 2;
inline constexpr u64 kHwcapImportant = kHwcapX86_64 | kHwcapX86Avx512_1;

// The hwcap mask ld.so applies (elf/dl-hwcaps.c: TUNABLE_GET (glibc, cpu, hwcap_mask)): the last
// glibc.cpu.hwcap_mask of GLIBC_TUNABLES, else its alias LD_HWCAP_MASK (null: unset), else
// HWCAP_IMPORTANT. Every value is one: _dl_strtoul reads the digits that start it.
u64 hwcap_mask(std::string_view glibc_tunables, const char* ld_hwcap_mask);

// What glibc 2.36's x86_64 loader makes of a CPU for its legacy hwcaps and $PLATFORM
// (sysdeps/x86/cpu-features.c, init_cpu_features): the platform is "haswell" or "xeon_phi" on an
// Intel CPU with those features, else the kernel's AT_PLATFORM ("x86_64"; none when the kernel
// gives none); the hwcap strings, in the order of their bits and only those `mask` keeps, are
// "x86_64", then "avx512_1" on an Intel CPU with AVX-512 F, CD, BW, DQ and VL usable and without
// AVX-512 ER.
struct LegacyHwcaps {
  std::string platform;  // "" for none
  std::vector<std::string> hwcaps;
};
LegacyHwcaps legacy_hwcaps(const CpuFeatures& cpu, const char* at_platform, u64 mask);
// This CPU's, with this process's AT_PLATFORM, GLIBC_TUNABLES and LD_HWCAP_MASK.
LegacyHwcaps legacy_hwcaps();
// The cache's view of them (ld_cache.h): the hwcap strings' bits and the platform's.
LegacyCacheHwcaps cache_hwcaps_of(const LegacyHwcaps& caps);

// The legacy subdirectories that ld.so tries in every search directory, in its order
// (elf/dl-hwcaps.c, _dl_important_hwcaps): every combination of "tls", the platform and the hwcap
// strings, latest bit first, the most components first. The combinations are of positions, not
// of names: where the platform is named as a hwcap is ("x86_64" on a CPU that is not Intel's),
// "tls/x86_64" and "x86_64" come twice, and ld.so tries each of them twice.
std::vector<std::string> legacy_subdirs(const LegacyHwcaps& caps);

// Splits a path list on `separators` the way fillin_rpath does: DSTs expanded against `origin`
// (nullopt: $ORIGIN unknown, which drops the element), trailing slashes removed, empty elements
// kept as "" (the current directory), duplicates removed. An element whose DST cannot be
// expanded is dropped.
std::vector<std::string> split_search_path(std::string_view list, std::string_view separators,
                                           const std::optional<std::string>& origin, const LoaderConfig& config);

// Expands $ORIGIN/${ORIGIN}, $LIB, $PLATFORM in `s`; nullopt when it holds $ORIGIN and
// `origin` is unknown.
std::optional<std::string> expand_dst(std::string_view s, const std::optional<std::string>& origin,
                                      const LoaderConfig& config);

// dirname of `path` made absolute against `cwd`, without resolving symlinks or "..": glibc's
// l_origin for an object opened by that path.
std::string origin_of(const std::string& path, const std::string& cwd);

// "dir" + "/" + "name", where dir "" means the current directory (name alone).
std::string join_path(const std::string& dir, std::string_view name);

}  // namespace envdoctor::loader
