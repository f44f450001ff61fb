#include "cuda/tables.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace envdoctor::cuda {

using nlohmann::json;

namespace {

DriverVersion branch_driver(int branch) { return *DriverVersion::parse(std::to_string(branch)); }

}  // namespace

std::optional<DriverVersion> CudaTables::full_compat_driver(MajorMinor runtime) const {
  std::optional<DriverVersion> best;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
    if (t.cuda == runtime && (!best || t.linux_driver < *best)) best = t.linux_driver;
  if (best) return best;
  // Table 3 stops at 13.3 (the Linux driver is unbundled from 13.4); the PTX release history
  // still pairs each release with its driver branch.
  for (const PtxIsaRelease& p : ptx_isa)
    if (p.cuda == runtime && p.driver_branch) return branch_driver(*p.driver_branch);
  return std::nullopt;
}

std::optional<DriverVersion> CudaTables::minor_compat_driver(int cuda_major) const {
  for (const MinorVersionFloor& f : minor_version_floor)
    if (f.cuda_major == cuda_major) return f.linux_driver;
  return std::nullopt;
}

std::optional<MajorMinor> CudaTables::newest_release() const {
  std::optional<MajorMinor> best;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
    if (!best || *best < t.cuda) best = t.cuda;
  for (const PtxIsaRelease& p : ptx_isa)
    if (p.driver_branch && (!best || *best < p.cuda)) best = p.cuda;
  return best;
}

bool CudaTables::release_beyond_table(MajorMinor runtime) const {
  std::optional<MajorMinor> newest = newest_release();
  return newest && *newest < runtime;
}

std::optional<DriverVersion> CudaTables::newest_driver() const {
  std::optional<DriverVersion> best;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
    if (!best || *best < t.linux_driver) best = t.linux_driver;
  for (const PtxIsaRelease& p : ptx_isa)
    if (p.driver_branch && (!best || best->major < *p.driver_branch)) best = branch_driver(*p.driver_branch);
  return best;
}

bool CudaTables::driver_beyond_table(const DriverVersion& driver) const {
  std::optional<DriverVersion> newest = newest_driver();
  return newest && driver.major > newest->major;
}

std::optional<MajorMinor> CudaTables::newest_cuda_for_driver(const DriverVersion& driver) const {
  if (driver_beyond_table(driver)) return std::nullopt;
  std::optional<MajorMinor> best;
  std::set<std::pair<int, int>> in_table3;
  for (const ToolkitDriverMinimum& t : toolkit_driver_minimum) {
    in_table3.insert({t.cuda.major, t.cuda.minor});
    if (t.linux_driver <= driver && (!best || *best < t.cuda)) best = t.cuda;
  }
  // Releases Table 3 lacks (12.7, 13.4) are known by their PTX driver branch.
  for (const PtxIsaRelease& p : ptx_isa)
    if (p.driver_branch && !in_table3.count({p.cuda.major, p.cuda.minor}) && *p.driver_branch <= driver.major &&
        (!best || *best < p.cuda))
      best = p.cuda;
  return best;
}

std::optional<MajorMinor> CudaTables::cuda_for_ptx_isa(MajorMinor isa) const {
  for (const PtxIsaRelease& p : ptx_isa)
    if (p.isa >= isa) return p.cuda;
  return std::nullopt;
}

std::optional<DriverVersion> CudaTables::driver_for_ptx_isa(MajorMinor isa) const {
  if (ptx_isa.empty()) return std::nullopt;
  // Older than every release in the table: the oldest table driver can JIT it.
  if (isa < ptx_isa.front().isa) return full_compat_driver(ptx_isa.front().cuda);
  for (const PtxIsaRelease& p : ptx_isa) {
    if (p.isa < isa) continue;
    // The PTX release history names the driver branch of each ISA from 8.0 on; before that the
    // GA driver of its release stands for it.
    if (p.driver_branch) return branch_driver(*p.driver_branch);
    std::optional<DriverVersion> ga;
    for (const ToolkitDriverMinimum& t : toolkit_driver_minimum)
      if (t.cuda == p.cuda && (!ga || t.linux_driver < *ga)) ga = t.linux_driver;
    return ga;
  }
  return std::nullopt;
}

std::optional<MajorMinor> CudaTables::newest_ptx_isa_with_driver() const {
  std::optional<MajorMinor> best;
  for (const PtxIsaRelease& p : ptx_isa)
    if (driver_for_ptx_isa(p.isa)) best = p.isa;
  return best;
}

int CudaTables::current_sm(int sm) const {
  for (const Renamed& r : renamed)
    if (r.sm == sm) return r.is;
  return sm;
}

bool CudaTables::gpu_beyond_table(int gpu_sm) const {
  if (architectures.empty()) return false;
  int sm = current_sm(gpu_sm);
  for (const Architecture& a : architectures)
    if (a.sm == sm) return false;
  return sm > architectures.front().sm;
}

int CudaTables::newest_sm() const { return architectures.empty() ? 0 : architectures.back().sm; }

const std::vector<int>* CudaTables::family(int sm) const {
  sm = current_sm(sm);
  for (const Family& f : families)
    if (f.sm == sm) return &f.runs_on;
  return nullptr;
}

std::optional<int> CudaTables::minimum_sm(int cuda_major) const {
  for (const MinimumArchitecture& m : minimum_architecture)
    if (m.cuda_major == cuda_major) return m.sm;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The data check.

namespace {

struct RowCheck {
  const CudaTables& tables;
  std::vector<std::string>& problems;

  void provenance(const std::string& where, const Provenance& p) {
    static const std::regex key(R"(\b(S\d+b?|OLD)\b)");
    size_t keys = 0;
    for (std::sregex_iterator it(p.source.begin(), p.source.end(), key), end; it != end; ++it, ++keys) {
      std::string k = (*it)[1];
      bool known =
          std::any_of(tables.sources.begin(), tables.sources.end(), [&](const auto& s) { return s.first == k; });
      if (!known) problems.push_back(where + ": source " + k + " is not in \"sources\"");
    }
    if (keys == 0) problems.push_back(where + ": no source");
  }
};

}  // namespace

std::vector<std::string> check_tables(const CudaTables& t) {
  std::vector<std::string> problems;
  RowCheck row{t, problems};
  std::map<std::string, std::string> driver_of_release;
  std::map<std::pair<int, int>, DriverVersion> ga;
  for (size_t i = 0; i < t.toolkit_driver_minimum.size(); ++i) {
    const ToolkitDriverMinimum& r = t.toolkit_driver_minimum[i];
    std::string where = "toolkit_driver_minimum \"" + r.release + "\"";
    row.provenance(where, r.provenance);
    auto [it, fresh] = driver_of_release.emplace(r.release, r.linux_driver.text);
    if (!fresh) problems.push_back(where + ": listed twice (" + it->second + " and " + r.linux_driver.text + ")");
    if (i > 0) {
      const ToolkitDriverMinimum& prev = t.toolkit_driver_minimum[i - 1];
      if (r.cuda < prev.cuda) problems.push_back(where + ": CUDA " + r.cuda.str() + " after " + prev.cuda.str());
      if (r.linux_driver < prev.linux_driver)
        problems.push_back(where + ": driver " + r.linux_driver.text + " after " + prev.linux_driver.text);
    }
    auto [g, first] = ga.emplace(std::pair(r.cuda.major, r.cuda.minor), r.linux_driver);
    if (!first && r.linux_driver < g->second) g->second = r.linux_driver;
  }
  for (size_t i = 0; i < t.minor_version_floor.size(); ++i) {
    const MinorVersionFloor& f = t.minor_version_floor[i];
    std::string where = "minor_version_compatibility " + std::to_string(f.cuda_major);
    row.provenance(where, f.provenance);
    if (i > 0 && (f.cuda_major <= t.minor_version_floor[i - 1].cuda_major ||
                  f.linux_driver <= t.minor_version_floor[i - 1].linux_driver))
      problems.push_back(where + ": not after the row before it");
  }
  for (size_t i = 0; i < t.ptx_isa.size(); ++i) {
    const PtxIsaRelease& p = t.ptx_isa[i];
    std::string where = "ptx_isa " + p.isa.str();
    row.provenance(where, p.provenance);
    if (i > 0) {
      const PtxIsaRelease& prev = t.ptx_isa[i - 1];
      if (!(prev.isa < p.isa) || !(prev.cuda < p.cuda)) problems.push_back(where + ": not after " + prev.isa.str());
      if (p.driver_branch && prev.driver_branch && *p.driver_branch <= *prev.driver_branch)
        problems.push_back(where + ": driver branch " + std::to_string(*p.driver_branch) + " not after " +
                           std::to_string(*prev.driver_branch));
    }
    // One release, one driver: Table 3's GA minimum is of the branch the PTX table names.
    auto g = ga.find({p.cuda.major, p.cuda.minor});
    if (p.driver_branch && g != ga.end() && g->second.major != *p.driver_branch)
      problems.push_back(where + ": CUDA " + p.cuda.str() + " is driver " + g->second.text +
                         " in toolkit_driver_minimum but branch " + std::to_string(*p.driver_branch) + " here");
  }
  for (size_t i = 0; i < t.architectures.size(); ++i) {
    row.provenance("architectures sm_" + std::to_string(t.architectures[i].sm), t.architectures[i].provenance);
    if (i > 0 && t.architectures[i].sm <= t.architectures[i - 1].sm)
      problems.push_back("architectures sm_" + std::to_string(t.architectures[i].sm) + ": not after the row before it");
  }
  for (const Renamed& r : t.renamed) row.provenance("renamed sm_" + std::to_string(r.sm), r.provenance);
  for (const Family& f : t.families) {
    std::string where = "families sm_" + std::to_string(f.sm) + "f";
    row.provenance(where, f.provenance);
    if (f.runs_on.empty() || f.runs_on.front() != f.sm || !std::is_sorted(f.runs_on.begin(), f.runs_on.end()))
      problems.push_back(where + ": runs_on must start with its own sm and ascend");
    for (int sm : f.runs_on)
      if (sm / 10 != f.sm / 10) problems.push_back(where + ": sm_" + std::to_string(sm) + " is another major");
  }
  for (const MinimumArchitecture& m : t.minimum_architecture)
    row.provenance("minimum_architecture " + std::to_string(m.cuda_major), m.provenance);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Reading data/cuda.json.

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

// "source" and "confidence" of a row. A row without them loads (check_tables reports it); a
// confidence other than the two words is an error.
Provenance provenance_of(const json& row) {
  Provenance p;
  p.source = row.value("source", "");
  std::string confidence = row.value("confidence", "secondary");
  if (confidence != "confirmed" && confidence != "secondary")
    throw std::runtime_error("bad confidence \"" + confidence + "\" (confirmed or secondary)");
  p.confirmed = confidence == "confirmed";
  return p;
}

int sm_field(const json& v) {
  int sm = v.get<int>();
  if (sm < 10 || sm > 999) throw std::runtime_error("bad sm " + v.dump());
  return sm;
}

CudaTables tables_from_json(const json& j) {
  CudaTables t;
  for (const json& row : j.at("toolkit_driver_minimum"))
    t.toolkit_driver_minimum.push_back({version_field<MajorMinor>(row, "cuda"), row.at("release").get<std::string>(),
                                        version_field<DriverVersion>(row, "linux"), provenance_of(row)});
  for (const json& row : j.at("minor_version_compatibility"))
    t.minor_version_floor.push_back(
        {row.at("cuda_major").get<int>(), version_field<DriverVersion>(row, "linux"), provenance_of(row)});
  for (const json& row : j.at("ptx_isa")) {
    PtxIsaRelease p{version_field<MajorMinor>(row, "isa"), version_field<MajorMinor>(row, "cuda"), std::nullopt,
                    provenance_of(row)};
    if (row.contains("driver_branch")) p.driver_branch = row.at("driver_branch").get<int>();
    t.ptx_isa.push_back(std::move(p));
  }
  std::sort(t.ptx_isa.begin(), t.ptx_isa.end(),
            [](const PtxIsaRelease& a, const PtxIsaRelease& b) { return a.isa < b.isa; });
  for (const json& row : j.value("architectures", json::array()))
    t.architectures.push_back({sm_field(row.at("sm")), provenance_of(row)});
  std::sort(t.architectures.begin(), t.architectures.end(),
            [](const Architecture& a, const Architecture& b) { return a.sm < b.sm; });
  for (const json& row : j.value("renamed", json::array()))
    t.renamed.push_back({sm_field(row.at("sm")), sm_field(row.at("is")), provenance_of(row)});
  for (const json& row : j.value("families", json::array())) {
    Family f{sm_field(row.at("family")), {}, provenance_of(row)};
    for (const json& sm : row.at("runs_on")) f.runs_on.push_back(sm_field(sm));
    t.families.push_back(std::move(f));
  }
  for (const json& row : j.value("minimum_architecture", json::array()))
    t.minimum_architecture.push_back({row.at("cuda_major").get<int>(), sm_field(row.at("sm")), provenance_of(row)});
  json sources = j.value("sources", json::object());
  for (const auto& [key, where] : sources.items()) t.sources.emplace_back(key, where.get<std::string>());
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
