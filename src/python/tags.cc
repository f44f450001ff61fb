#include "python/tags.h"

#include <unordered_set>

namespace envdoctor::python {

namespace {

// packaging._manylinux._LEGACY_MANYLINUX_MAP.
const char* legacy_manylinux(int major, int minor) {
  if (major != 2) return nullptr;
  if (minor == 17) return "manylinux2014";
  if (minor == 12) return "manylinux2010";
  if (minor == 5) return "manylinux1";
  return nullptr;
}

// The part of sysconfig.get_platform() packaging keeps: "linux-x86_64" -> "linux_x86_64".
std::string normalized_platform(const PythonEnvironment& env) {
  std::string p = env.sysconfig_platform.empty() ? "linux-" + env.machine : env.sysconfig_platform;
  for (char& c : p)
    if (c == '-' || c == '.' || c == ' ') c = '_';
  // packaging._linux_platforms: a 32-bit interpreter on a 64-bit kernel.
  if (env.is_32bit) {
    if (p == "linux_x86_64") p = "linux_i686";
    else if (p == "linux_aarch64") p = "linux_armv7l";
  }
  return p;
}

std::string nodot(int major, int minor) { return std::to_string(major) + std::to_string(minor); }

}  // namespace

std::vector<std::string> linux_platform_tags(const PythonEnvironment& env) {
  std::vector<std::string> out;
  std::string linux = normalized_platform(env);
  std::string arch = linux.substr(linux.find('_') + 1);
  int major = 0, minor = 0;
  if (!env.glibc_version.empty() && std::sscanf(env.glibc_version.c_str(), "%d.%d", &major, &minor) == 2 &&
      major == 2) {
    // packaging._manylinux.platform_tags: every glibc 2.Y from the running one down to the
    // oldest manylinux knows for the architecture (2.5 on x86, 2.17 elsewhere).
    int oldest = (arch == "x86_64" || arch == "i686") ? 5 : 17;
    for (int y = minor; y >= oldest; y--) {
      out.push_back("manylinux_2_" + std::to_string(y) + "_" + arch);
      if (const char* legacy = legacy_manylinux(2, y)) out.push_back(std::string(legacy) + "_" + arch);
    }
  }
  out.push_back(linux);
  return out;
}

std::vector<Tag> supported_tags(const PythonEnvironment& env) {
  std::vector<Tag> tags;
  std::vector<std::string> platforms = linux_platform_tags(env);
  int major = env.version_info.major, minor = env.version_info.minor;
  std::string version = nodot(major, minor);
  bool cpython = env.implementation == "cpython";
  if (cpython) {
    // packaging.tags._cpython_abis.
    std::string interp = "cp" + version;
    std::string debug = env.py_debug ? "d" : "";
    std::string threading = env.gil_disabled ? "t" : "";
    std::vector<std::string> abis;
    if (major == 3 && minor < 8) {
      abis.push_back("cp" + version + debug + (env.with_pymalloc ? "m" : ""));
    } else {
      abis.push_back("cp" + version + threading + debug);
      if (!debug.empty()) abis.push_back("cp" + version + threading);
    }
    for (const std::string& abi : abis)
      for (const std::string& p : platforms) tags.push_back({interp, abi, p});
    // abi3 does not apply to free-threaded builds (packaging >= 24).
    bool abi3 = major == 3 && minor >= 2 && env.gil_disabled == false;
    if (abi3)
      for (const std::string& p : platforms) tags.push_back({interp, "abi3", p});
    for (const std::string& p : platforms) tags.push_back({interp, "none", p});
    if (abi3)
      for (int m = minor - 1; m >= 2; m--)
        for (const std::string& p : platforms) tags.push_back({"cp" + nodot(major, m), "abi3", p});
  }
  // packaging.tags.compatible_tags with _py_interpreter_range: py311, py3, py310 ... py30.
  std::vector<std::string> pys = {"py" + version, "py" + std::to_string(major)};
  for (int m = minor - 1; m >= 0; m--) pys.push_back("py" + nodot(major, m));
  for (const std::string& py : pys)
    for (const std::string& p : platforms) tags.push_back({py, "none", p});
  if (cpython) tags.push_back({"cp" + version, "none", "any"});
  for (const std::string& py : pys) tags.push_back({py, "none", "any"});
  return tags;
}

bool wheel_supported(const WheelName& wheel, const std::vector<Tag>& supported) {
  std::unordered_set<std::string> set;
  for (const Tag& t : supported) set.insert(t.str());
  for (const Tag& t : wheel.tags())
    if (set.count(t.str())) return true;
  return false;
}

}  // namespace envdoctor::python
