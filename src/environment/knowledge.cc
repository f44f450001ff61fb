#include "environment/knowledge.h"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace envdoctor::environment {

namespace {

// "12" -> 12: one to three digits, nothing else.
std::optional<int> cuda_major_of(const std::string& text) {
  if (text.empty() || text.size() > 3) return std::nullopt;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n > 0 ? std::optional<int>(n) : std::nullopt;
}

// A table of data/ read as untrusted input: `read` takes its rows into `out`; false with `error`
// set (the file named) when it cannot be read or a field is missing or of the wrong type.
template <typename Row, typename Read>
bool load_table(const std::string& path, const char* rows, std::vector<Row>& out, std::string* error, Read read) {
  std::ifstream in(path);
  if (!in) {
    if (error) *error = path + ": cannot be read";
    return false;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    for (const nlohmann::json& row : j.at(rows)) out.push_back(read(row));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = path + ": " + e.what();
    return false;
  }
}

// data/package_loads.json, whose errors name the rule and the field (package_rules.h).
bool load_package_rules(const std::string& path, PackageRules& out, std::string* error) {
  std::ifstream in(path);
  std::string why = "cannot be read";
  std::optional<PackageRules> rules;
  try {
    if (in) rules = PackageRules::parse(nlohmann::json::parse(in), &why);
  } catch (const std::exception& e) {  // not JSON
    why = e.what();
  }
  if (!rules && error) *error = path + ": " + why;
  if (rules) out = std::move(*rules);
  return rules.has_value();
}

// data/driver_libraries.json's rows.
DriverLibrary driver_library_row(const nlohmann::json& lib) {
  return {lib.at("prefix").get<std::string>(), lib.at("capability").get<std::string>()};
}

// data/plugins.json's rows.
Plugin plugin_row(const nlohmann::json& row) {
  return {row.at("packages").get<std::vector<std::string>>(), row.at("files").get<std::vector<std::string>>(),
          row.at("why").get<std::string>()};
}

// The non-empty components of a path.
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1)
    if (slash > start) out.push_back(path.substr(start, slash - start));
  if (start < path.size()) out.push_back(path.substr(start));
  return out;
}

// Whether the last components of `path` match `glob`'s, component by component (fnmatch).
bool tail_matches(const std::string& glob, const std::string& path) {
  std::vector<std::string> want = components(glob), have = components(path);
  if (want.empty() || want.size() > have.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (fnmatch(want[i].c_str(), have[have.size() - want.size() + i].c_str(), 0) != 0) return false;
  return true;
}

}  // namespace

std::optional<Knowledge> Knowledge::load(const std::string& data_dir, std::string* error) {
  std::string path = data_dir + "/sonames.json";
  std::ifstream in(path);
  if (!in) {
    if (error) *error = path + ": cannot be read";
    return std::nullopt;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    Knowledge k;
    const nlohmann::json& libraries = j.at("libraries");
    for (size_t i = 0; i < libraries.size(); ++i) {
      const nlohmann::json& lib = libraries[i];
      std::string cuda = lib.value("cuda", "");
      std::optional<int> major = cuda.empty() ? std::optional<int>(0) : cuda_major_of(cuda);
      if (!major) {
        if (error) *error = path + ": libraries[" + std::to_string(i) + "].cuda: \"" + cuda + "\" is not a CUDA major";
        return std::nullopt;
      }
      k.libraries_.push_back(
          {lib.at("soname").get<std::string>(), lib.at("package").get<std::string>(), *major, lib.value("folder", "")});
    }
    for (const auto& p : j.value("placeholders", nlohmann::json::array()))
      k.placeholders_.push_back({p.at("name").get<std::string>(), p.value("note", "")});
    if (!load_table(data_dir + "/driver_libraries.json", "libraries", k.driver_libraries_, error, driver_library_row) ||
        !load_table(data_dir + "/plugins.json", "plugins", k.plugins_, error, plugin_row) ||
        !load_package_rules(data_dir + "/package_loads.json", k.package_rules_, error))
      return std::nullopt;
    return k;
  } catch (const std::exception& e) {
    if (error) *error = path + ": " + e.what();
    return std::nullopt;
  }
}

std::vector<const KnownLibrary*> Knowledge::providers(std::string_view soname) const {
  std::vector<const KnownLibrary*> out;
  for (const KnownLibrary& l : libraries_)
    if (l.soname == soname) out.push_back(&l);
  return out;
}

const Plugin* Knowledge::plugin(std::string_view package, const std::string& path) const {
  for (const Plugin& p : plugins_)
    if (std::find(p.packages.begin(), p.packages.end(), package) != p.packages.end())
      for (const std::string& glob : p.files)
        if (tail_matches(glob, path)) return &p;
  return nullptr;
}

const KnownPlaceholder* Knowledge::placeholder(std::string_view normalized_name) const {
  for (const KnownPlaceholder& p : placeholders_)
    if (p.name == normalized_name) return &p;
  return nullptr;
}

const DriverLibrary* Knowledge::driver_library(std::string_view name) const {
  // The container toolkit matches ld.so.cache entries by prefix (nvc_info.c); a prefix followed
  // by anything but a version would be another library (libcuda.so vs libcudart.so.13).
  for (const DriverLibrary& l : driver_libraries_)
    if (name.starts_with(l.prefix) && (name.size() == l.prefix.size() || name[l.prefix.size()] == '.')) return &l;
  return nullptr;
}

int Knowledge::cuda_major(std::string_view soname) const {
  int major = 0;
  for (const KnownLibrary& l : libraries_) {
    if (l.soname != soname || l.cuda == 0) continue;
    if (major != 0 && major != l.cuda) return 0;
    major = l.cuda;
  }
  return major;
}

}  // namespace envdoctor::environment
