#include "python/auditwheel_policy.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/text.h"

namespace envdoctor::python {

namespace {

using nlohmann::json;

// musl's C library under the name its loader gives it on each architecture; auditwheel's
// policy/__init__.py, _fixup_musl_libc_soname, writes "libc.so" of the data so.
std::string musl_libc_soname(std::string_view arch) {
  if (arch == "i686") return "libc.musl-x86.so.1";
  if (arch == "armv7l") return "libc.musl-armv7.so.1";
  return "libc.musl-" + std::string(arch) + ".so.1";
}

}  // namespace

std::string_view libc_tag_prefix(Libc libc) {
  return libc == Libc::kMusl ? "musllinux" : libc == Libc::kAndroid ? "android" : "manylinux";
}
std::string_view libc_name(Libc libc) {
  return libc == Libc::kMusl ? "musl" : libc == Libc::kAndroid ? "android" : "glibc";
}

bool Policy::named(std::string_view tag) const {
  return name == tag || std::find(aliases.begin(), aliases.end(), tag) != aliases.end();
}

const Policy* PolicySet::find(std::string_view tag) const {
  for (const Policy& p : policies)
    if (p.named(tag)) return &p;
  return nullptr;
}

std::string_view AuditwheelPolicies::source() {
  return "pypa/auditwheel 6.8.1 (94e0693e0fcb444c7fe50f09a8a635e791be6174)";
}

std::optional<AuditwheelPolicies> AuditwheelPolicies::load(const std::string& data_dir, std::string* error) {
  AuditwheelPolicies out;
  for (auto [file, into] : {std::pair{"manylinux-policy.json", &out.manylinux_},
                            {"musllinux-policy.json", &out.musllinux_},
                            {"android-policy.json", &out.android_}}) {
    std::string path = data_dir + "/auditwheel/" + file;
    std::ifstream in(path);
    if (!in) {
      *error = path + ": cannot be read";
      return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
      json doc = json::parse(text.str());
      if (!doc.is_array()) throw std::runtime_error("not a list of policies");
      for (const json& p : doc) {
        Entry e;
        e.name = p.at("name").get<std::string>();
        e.aliases = p.at("aliases").get<std::vector<std::string>>();
        e.priority = p.at("priority").get<int>();
        e.symbol_versions = p.at("symbol_versions").get<decltype(e.symbol_versions)>();
        e.whitelist = p.at("lib_whitelist").get<std::vector<std::string>>();
        e.blacklist = p.at("blacklist").get<decltype(e.blacklist)>();
        into->push_back(std::move(e));
      }
    } catch (const std::exception& ex) {
      *error = path + ": " + ex.what();
      return std::nullopt;
    }
  }
  return out;
}

PolicySet AuditwheelPolicies::for_arch(Libc libc, std::string_view arch) const {
  PolicySet set;
  set.libc = libc;
  set.arch = std::string(arch);
  const std::string suffix = "_" + std::string(arch);
  for (const Entry& e : libc == Libc::kMusl ? musllinux_ : libc == Libc::kAndroid ? android_ : manylinux_) {
    bool is_linux = e.name == "linux";
    auto versions = e.symbol_versions.find(set.arch);
    if (!is_linux && versions == e.symbol_versions.end()) continue;  // no such policy on this architecture
    Policy p;
    p.name = e.name + suffix;
    for (const std::string& a : e.aliases) p.aliases.push_back(a + suffix);
    p.priority = e.priority;
    // A prefix listed with no version ("ZLIB": [] in manylinux_2_5) allows none of that prefix.
    if (!is_linux)
      for (const auto& [prefix, list] : versions->second) {
        std::set<std::string>& allowed = p.symbol_versions[prefix];
        for (const std::string& v : list) allowed.insert(prefix + "_" + v);
      }
    for (const std::string& lib : e.whitelist)
      p.whitelist.insert(libc == Libc::kMusl && lib == "libc.so" ? musl_libc_soname(arch) : lib);
    p.blacklist = e.blacklist;
    set.policies.push_back(std::move(p));
  }
  std::stable_sort(set.policies.begin(), set.policies.end(),
                   [](const Policy& a, const Policy& b) { return a.priority < b.priority; });
  return set;
}

std::optional<PolicySet> AuditwheelPolicies::wheel_policies(Libc libc, std::string_view arch,
                                                            const std::vector<std::string>& platforms,
                                                            const std::optional<std::string>& musl_policy,
                                                            std::string* error) const {
  PolicySet set = for_arch(libc, arch);
  if (libc == Libc::kMusl) {
    // auditwheel's WheelPolicies.__init__: the host's musl policy, else the newest one.
    std::vector<Policy> kept;
    for (Policy& p : set.policies)
      if (p.is_linux() || (musl_policy ? p.name == *musl_policy + "_" + set.arch : kept.size() == 1))
        kept.push_back(std::move(p));
    if (kept.size() != 2) {
      *error = "auditwheel defines no " + musl_policy.value_or("musllinux") + " policy for " + set.arch;
      return std::nullopt;
    }
    set.policies = std::move(kept);
  } else if (libc == Libc::kAndroid) {
    // Android wheels keep their platform tag: the newest policy at or below its API level, named after it.
    auto api_level = [](std::string_view tag) {
      int level = -1;
      if (tag.starts_with("android_")) std::from_chars(tag.data() + 8, tag.data() + tag.size(), level);
      return level;
    };
    if (platforms.size() != 1) {
      *error = "Android wheels must have exactly one platform tag, got " + support::join(platforms);
      return std::nullopt;
    }
    const Policy* chosen = nullptr;
    for (const Policy& p : set.policies)
      if (!chosen && !p.is_linux() && api_level(p.name) >= 0 && api_level(p.name) <= api_level(platforms[0]))
        chosen = &p;
    if (!chosen || api_level(platforms[0]) < 0) {
      *error = "no Android policies match the platform tag '" + platforms[0] + "'";
      return std::nullopt;
    }
    Policy renamed = *chosen;
    renamed.name = platforms[0];
    set.policies = {set.policies.front(), std::move(renamed)};
  }
  return set;
}

}  // namespace envdoctor::python
