#include "checks/knowledge.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace envdoctor::checks {

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

int Knowledge::cuda_major(std::string_view soname) const {
  int major = 0;
  for (const KnownLibrary& l : libraries_) {
    if (l.soname != soname || l.cuda == 0) continue;
    if (major != 0 && major != l.cuda) return 0;
    major = l.cuda;
  }
  return major;
}

}  // namespace envdoctor::checks
