#include "loader/search_paths.h"

#include <unistd.h>

#include <algorithm>
#include <climits>

namespace envdoctor::loader {

std::vector<std::string> supported_x86_64_levels() {
#if defined(__x86_64__)
  // sysdeps/x86/get-isa-level.h: each level needs the previous one and these features.
  __builtin_cpu_init();
  bool v2 = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse3") && __builtin_cpu_supports("ssse3") &&
            __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("sse4.2");
  bool v3 = v2 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
            __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
  bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl");
  std::vector<std::string> out;
  if (v4) out.push_back("x86-64-v4");
  if (v3) out.push_back("x86-64-v3");
  if (v2) out.push_back("x86-64-v2");
  return out;
#else
  return {};
#endif
}

LoaderConfig LoaderConfig::for_host(const std::string& root) {
  LoaderConfig c;
  c.root = root;
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof buf)) c.cwd = buf;
  c.hwcaps = supported_x86_64_levels();
  for (const std::string& level : c.hwcaps) c.subdirs.push_back("glibc-hwcaps/" + level);
  // glibc 2.36's legacy hwcaps: the power set of {AT_PLATFORM, the "x86_64" hwcap string} under
  // "tls", then without it, as LD_DEBUG=libs shows (duplicates kept out; they change nothing).
  for (const char* s : {"tls/x86_64/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64"}) c.subdirs.push_back(s);
  std::string err;
  c.cache = LdCache::load(root + c.cache_path, &err);
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
  return c;
}

}  // namespace envdoctor::loader
