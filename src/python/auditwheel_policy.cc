#include "python/auditwheel_policy.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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

std::string_view libc_tag_prefix(Libc libc) { return libc == Libc::kMusl ? "musllinux" : "manylinux"; }
std::string_view libc_name(Libc libc) { return libc == Libc::kMusl ? "musl" : "glibc"; }

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
  for (auto [file, into] :
       {std::pair{"manylinux-policy.json", &out.manylinux_}, {"musllinux-policy.json", &out.musllinux_}}) {
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
  for (const Entry& e : libc == Libc::kMusl ? musllinux_ : manylinux_) {
    bool is_linux = e.name == "linux";
    auto versions = e.symbol_versions.find(set.arch);
    if (!is_linux && versions == e.symbol_versions.end()) continue;  // no such policy on this architecture
    Policy p;
    p.name = e.name + suffix;
    for (const std::string& a : e.aliases) p.aliases.push_back(a + suffix);
    p.priority = e.priority;
    if (!is_linux)
      for (const auto& [prefix, list] : versions->second)
        for (const std::string& v : list) p.symbol_versions[prefix].insert(prefix + "_" + v);
    for (const std::string& lib : e.whitelist)
      p.whitelist.insert(libc == Libc::kMusl && lib == "libc.so" ? musl_libc_soname(arch) : lib);
    p.blacklist = e.blacklist;
    set.policies.push_back(std::move(p));
  }
  std::stable_sort(set.policies.begin(), set.policies.end(),
                   [](const Policy& a, const Policy& b) { return a.priority < b.priority; });
  return set;
}

}  // namespace envdoctor::python
