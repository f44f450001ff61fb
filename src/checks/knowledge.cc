#include "checks/knowledge.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace envdoctor::checks {

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
    for (const auto& lib : j.at("libraries"))
      k.libraries_.push_back({lib.at("soname").get<std::string>(), lib.at("package").get<std::string>(),
                              lib.value("cuda", ""), lib.value("folder", "")});
    for (const auto& p : j.value("placeholders", nlohmann::json::array()))
      k.placeholders_.push_back({p.at("name").get<std::string>(), p.value("note", "")});
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

const KnownPlaceholder* Knowledge::placeholder(std::string_view normalized_name) const {
  for (const KnownPlaceholder& p : placeholders_)
    if (p.name == normalized_name) return &p;
  return nullptr;
}

std::string Knowledge::cuda_major(std::string_view soname) const {
  std::string major;
  for (const KnownLibrary& l : libraries_) {
    if (l.soname != soname || l.cuda.empty()) continue;
    if (!major.empty() && major != l.cuda) return "";
    major = l.cuda;
  }
  return major;
}

}  // namespace envdoctor::checks
