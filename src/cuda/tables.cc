#include "cuda/tables.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace envdoctor::cuda {

using nlohmann::json;

std::optional<DriverVersion> CudaTables::full_compat_driver(MajorMinor runtime) const {
  std::optional<DriverVersion> best;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
    if (t.cuda == runtime && (!best || t.linux_driver < *best)) best = t.linux_driver;
  return best;
}

std::optional<DriverVersion> CudaTables::minor_compat_driver(int cuda_major) const {
  for (const auto& [major, driver] : minor_version_floor)
    if (major == cuda_major) return driver;
  return std::nullopt;
}

std::optional<MajorMinor> CudaTables::cuda_for_ptx_isa(MajorMinor isa) const {
  for (const auto& [table_isa, cuda] : ptx_isa)
    if (table_isa >= isa) return cuda;
  return std::nullopt;
}

std::optional<DriverVersion> CudaTables::driver_for_ptx_isa(MajorMinor isa) const {
  if (ptx_isa.empty()) return std::nullopt;
  if (isa < ptx_isa.front().first) {
    // Older than every release in the table: the oldest table driver can JIT it.
    return full_compat_driver(ptx_isa.front().second);
  }
  std::optional<MajorMinor> cuda = cuda_for_ptx_isa(isa);
  if (!cuda) return std::nullopt;
  return full_compat_driver(*cuda);
}

std::optional<DriverVersion> CudaTables::newest_driver() const {
  std::optional<DriverVersion> best;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
    if (!best || *best < t.linux_driver) best = t.linux_driver;
  return best;
}

std::string default_data_dir() {
  if (const char* env = std::getenv("ENVDOCTOR_DATA_DIR"); env && *env) return env;
  // An installed binary (make install, or a wheel's script): PREFIX/bin/envdoctor reads
  // PREFIX/share/envdoctor, its own copy, before the source tree it was built from.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "envdoctor";
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return ENVDOCTOR_DATA_DIR;
}

namespace {

// Reads a field that must be a string holding a version; throws with the field's name.
template <typename V>
V version_field(const json& j, const char* key) {
  const json& v = j.at(key);
  std::optional<V> parsed = v.is_string() ? V::parse(v.get<std::string>()) : std::nullopt;
  if (!parsed) throw std::runtime_error(std::string("bad version in \"") + key + "\": " + v.dump());
  return *parsed;
}

CudaTables tables_from_json(const json& j) {
  CudaTables t;
  for (const json& row : j.at("toolkit_driver_minimum")) {
    ToolkitDriverMinimum m;
    m.cuda = version_field<MajorMinor>(row, "cuda");
    m.release = row.at("release").get<std::string>();
    m.linux_driver = version_field<DriverVersion>(row, "linux");
    m.verified = row.value("verified", true);
    t.toolkit_driver_minimum.push_back(std::move(m));
  }
  for (const json& row : j.at("minor_version_compatibility"))
    t.minor_version_floor.emplace_back(row.at("cuda_major").get<int>(), version_field<DriverVersion>(row, "linux"));
  for (const json& row : j.at("ptx_isa"))
    t.ptx_isa.emplace_back(version_field<MajorMinor>(row, "isa"), version_field<MajorMinor>(row, "cuda"));
  std::sort(t.ptx_isa.begin(), t.ptx_isa.end());
  return t;
}

}  // namespace

std::optional<CudaTables> load_cuda_tables(const std::string& data_dir, std::string* error) {
  std::string path = data_dir + "/cuda.json";
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return std::nullopt;
  }
  try {
    return tables_from_json(json::parse(in));
  } catch (const std::exception& e) {
    *error = path + ": " + e.what();
    return std::nullopt;
  }
}

}  // namespace envdoctor::cuda
