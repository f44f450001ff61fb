#include "loader/search_paths.h"

#include <sys/auxv.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "loader/tunables.h"

namespace envdoctor::loader {

const CpuFeatures& CpuFeatures::of_this_cpu() {
  static const CpuFeatures cpu = [] {
    CpuFeatures c;
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return c;
    unsigned max_leaf = eax;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    c.intel = std::strcmp(vendor, "GenuineIntel") == 0;  // arch_kind_intel
    auto bit = [](unsigned reg, int n) { return (reg & (1u << n)) != 0; };
    __get_cpuid(1, &eax, &ebx, &ecx, &edx);
    unsigned long long xcr0 = 0;
    if (bit(ecx, 27)) {  // OSXSAVE
      unsigned lo = 0, hi = 0;
      __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    bool avx_state = (xcr0 & 0x6) == 0x6;                    // XMM and YMM
    bool avx512_state = avx_state && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM0-15 high, ZMM16-31
    c.sse3 = bit(ecx, 0), c.ssse3 = bit(ecx, 9), c.cx16 = bit(ecx, 13), c.sse4_1 = bit(ecx, 19);
    c.sse4_2 = bit(ecx, 20), c.movbe = bit(ecx, 22), c.popcnt = bit(ecx, 23);
    c.avx = avx_state && bit(ecx, 28);
    c.fma = c.avx && bit(ecx, 12), c.f16c = c.avx && bit(ecx, 29);
    if (__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx)) c.lahf = bit(ecx, 0), c.lzcnt = bit(ecx, 5);
    if (max_leaf >= 7) {
      __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
      c.bmi1 = bit(ebx, 3), c.bmi2 = bit(ebx, 8), c.avx2 = c.avx && bit(ebx, 5);
      c.avx512f = avx512_state && bit(ebx, 16);
      auto avx512 = [&](int n) { return c.avx512f && bit(ebx, n); };
      c.avx512dq = avx512(17), c.avx512pf = avx512(26), c.avx512er = avx512(27), c.avx512cd = avx512(28);
      c.avx512bw = avx512(30), c.avx512vl = avx512(31);
    }
#endif
    return c;
  }();
  return cpu;
}

std::vector<std::string> supported_x86_64_levels(const CpuFeatures& c) {
#if defined(__x86_64__)
  // sysdeps/x86/get-isa-level.h: each level needs the previous one and these features (the
  // baseline's, CMOV to SSE2, come with x86_64).
  bool v2 = c.cx16 && c.lahf && c.popcnt && c.sse3 && c.ssse3 && c.sse4_1 && c.sse4_2;
  bool v3 = v2 && c.avx && c.avx2 && c.bmi1 && c.bmi2 && c.f16c && c.fma && c.lzcnt && c.movbe;
  bool v4 = v3 && c.avx512f && c.avx512bw && c.avx512cd && c.avx512dq && c.avx512vl;
  std::vector<std::string> out;
  if (v4) out.push_back("x86-64-v4");
  if (v3) out.push_back("x86-64-v3");
  if (v2) out.push_back("x86-64-v2");
  return out;
#else
  (void)c;
  return {};
#endif
}

std::vector<std::string> supported_x86_64_levels() { return supported_x86_64_levels(CpuFeatures::of_this_cpu()); }

u64 hwcap_mask(std::string_view glibc_tunables, const char* ld_hwcap_mask) {
  std::optional<u64> tunable;
  for_each_tunable(glibc_tunables, [&](std::string_view name, std::string_view value) {
    if (name == "glibc.cpu.hwcap_mask") tunable = dl_strtoul(value);  // its range is all of u64
  });
  if (tunable) return *tunable;
  if (ld_hwcap_mask) return dl_strtoul(ld_hwcap_mask);
  return kHwcapImportant;
}

LegacyHwcaps legacy_hwcaps(const CpuFeatures& c, const char* at_platform, u64 mask) {
  LegacyHwcaps caps;
  // The kernel's AT_PLATFORM, which glibc keeps unless an Intel CPU gives it a better name.
  if (at_platform) caps.platform = at_platform;
  u64 hwcap = kHwcapX86_64;  // always, on x86_64
  const char* platform = nullptr;
  if (c.intel) {
    if (c.avx512cd) {
      if (c.avx512er) {
        if (c.avx512pf) platform = "xeon_phi";
      } else if (c.avx512bw && c.avx512dq && c.avx512vl) {
        hwcap |= kHwcapX86Avx512_1;
      }
    }
    if (!platform && c.avx2 && c.fma && c.bmi1 && c.bmi2 && c.lzcnt && c.movbe && c.popcnt) platform = "haswell";
  }
  if (platform) caps.platform = platform;
  // _dl_important_hwcaps lists the masked bits in ascending order, by _dl_hwcap_string's names.
  u64 masked = hwcap & mask;
  if (masked & kHwcapX86_64) caps.hwcaps.push_back("x86_64");
  if (masked & kHwcapX86Avx512_1) caps.hwcaps.push_back("avx512_1");
  return caps;
}

LegacyHwcaps legacy_hwcaps() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return legacy_hwcaps(CpuFeatures::of_this_cpu(), reinterpret_cast<const char*>(::getauxval(AT_PLATFORM)),
                       hwcap_mask(tunables ? tunables : "", std::getenv("LD_HWCAP_MASK")));
}

std::vector<std::string> legacy_subdirs(const LegacyHwcaps& caps) {
  // _dl_important_hwcaps lists the hwcap strings by bit, then the platform, then "tls", and
  // builds each combination of those positions with the last listed first, from all of them
  // down to none: "tls/haswell/avx512_1/x86_64" ... "x86_64". None is the directory itself,
  // which the caller tries last. Names are not merged: glibc compares no strings here.
  std::vector<std::string> parts = {"tls"};
  if (!caps.platform.empty()) parts.push_back(caps.platform);
  for (auto it = caps.hwcaps.rbegin(); it != caps.hwcaps.rend(); ++it) parts.push_back(*it);
  std::vector<std::string> out;
  size_t n = parts.size();
  for (size_t mask = (size_t{1} << n) - 1; mask > 0; --mask) {
    std::string dir;
    for (size_t i = 0; i < n; ++i)
      if (mask & (size_t{1} << (n - 1 - i))) dir += (dir.empty() ? "" : "/") + parts[i];
    out.push_back(std::move(dir));
  }
  return out;
}

LegacyCacheHwcaps cache_hwcaps_of(const LegacyHwcaps& caps) {
  LegacyCacheHwcaps out;
  for (const std::string& name : caps.hwcaps) out.hwcap |= name == "avx512_1" ? kHwcapX86Avx512_1 : kHwcapX86_64;
  // _dl_string_platform: x86-64's platforms are haswell and xeon_phi, at _DL_FIRST_PLATFORM (48)
  // + 2 and + 3; "x86_64" is none of them.
  if (caps.platform == "haswell") out.platform = u64{1} << 50;
  if (caps.platform == "xeon_phi") out.platform = u64{1} << 51;
  return out;
}

LoaderConfig LoaderConfig::for_host(const std::string& root) {
  LoaderConfig c;
  c.root = root;
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof buf)) c.cwd = buf;
  c.hwcaps = supported_x86_64_levels();
  for (const std::string& level : c.hwcaps) c.subdirs.push_back("glibc-hwcaps/" + level);
  LegacyHwcaps legacy = legacy_hwcaps();
  for (std::string& sub : legacy_subdirs(legacy)) c.subdirs.push_back(std::move(sub));
  c.dst_platform = legacy.platform;
  c.cache_hwcaps = cache_hwcaps_of(legacy);
  std::string err;
  c.cache = LdCache::load(root + c.cache_path, &err);
  // rtld.c reads the file only when access(R_OK) allows, and then whole.
  if (std::ifstream in(root + "/etc/ld.so.preload", std::ios::binary); in)
    c.ld_so_preload.emplace(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return c;
}

static bool is_ident_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The length of the DST name `name` at the start of `s` (just after '$'), braced or not; 0 when
// `s` does not start with it (glibc elf/dl-load.c: is_dst).
static size_t match_dst(std::string_view s, std::string_view name) {
  if (!s.empty() && s[0] == '{') {
    if (s.substr(1, name.size()) == name && s.size() > name.size() + 1 && s[name.size() + 1] == '}')
      return name.size() + 2;
    return 0;
  }
  if (s.substr(0, name.size()) == name && (s.size() == name.size() || !is_ident_char(s[name.size()])))
    return name.size();
  return 0;
}

std::optional<std::string> expand_dst(std::string_view s, const std::optional<std::string>& origin,
                                      const LoaderConfig& config) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$') {
      out += s[i];
      continue;
    }
    std::string_view rest = s.substr(i + 1);
    if (size_t n = match_dst(rest, "ORIGIN")) {
      if (!origin) return std::nullopt;
      out += *origin;
      i += n;
    } else if (size_t n = match_dst(rest, "PLATFORM")) {
      // elf/dl-load.c, _dl_dst_substitute: no platform drops the element, as an unknown $ORIGIN.
      if (config.dst_platform.empty()) return std::nullopt;
      out += config.dst_platform;
      i += n;
    } else if (size_t n = match_dst(rest, "LIB")) {
      out += config.dst_lib;
      i += n;
    } else {
      out += '$';  // not a DST: copied as it is
    }
  }
  return out;
}

std::vector<std::string> split_search_path(std::string_view list, std::string_view separators,
                                           const std::optional<std::string>& origin, const LoaderConfig& config) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(separators, start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view element = list.substr(start, end - start);
    start = end + 1;

    std::string dir;
    if (!element.empty()) {
      auto expanded = expand_dst(element, origin, config);
      if (!expanded || expanded->empty()) continue;  // an unexpandable DST drops the element
      dir = std::move(*expanded);
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    }
    // An empty element stays "": the current directory.
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(std::move(dir));
    if (end == list.size()) break;
  }
  return dirs;
}

std::string origin_of(const std::string& path, const std::string& cwd) {
  std::string abs = path.empty() || path[0] == '/' ? path : cwd + "/" + path;
  size_t slash = abs.rfind('/');
  if (slash == std::string::npos) return cwd;
  if (slash == 0) return "/";
  return abs.substr(0, slash);
}

std::string join_path(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return dir + std::string(name);
  return dir + "/" + std::string(name);
}

LoaderConfig LoaderConfig::for_i386(const LoaderConfig& host) {
  LoaderConfig c = host;
  c.default_dirs = {"/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/lib", "/usr/lib"};
  c.interpreter = "/lib/ld-linux.so.2";
  c.subdirs.clear();
  c.hwcaps.clear();
  c.dst_lib = "lib/i386-linux-gnu";
  c.dst_platform = "i686";
  // i386's legacy hwcap entries (sse2, i586, i686) are not modelled: skipped, as none of the
  // x86-64 bits they would be judged by.
  c.cache_hwcaps = {};
  return c;
}

}  // namespace envdoctor::loader
