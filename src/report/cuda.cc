// `envdoctor cuda`: queries::CudaSummary as a table for people or as JSON.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/report.h"
#include "support/text.h"

namespace envdoctor::report {

namespace {

using nlohmann::ordered_json;

// Whether the driver runs the runtime: nullopt where nothing was judged.
std::optional<bool> driver_ok(checks::DriverFit fit) {
  switch (fit) {
    case checks::DriverFit::kFull:
    case checks::DriverFit::kMinorCompat:
    case checks::DriverFit::kReleaseUnknown: return true;
    case checks::DriverFit::kTooOld: return false;
    default: return std::nullopt;
  }
}

std::string verdict_text(checks::DriverFit fit) {
  switch (fit) {
    case checks::DriverFit::kBeyondTable: return "  newer than this envdoctor's CUDA table: update envdoctor";
    case checks::DriverFit::kTooOld: return "  TOO NEW for this driver";
    case checks::DriverFit::kMinorCompat: return "  runs through minor-version compatibility";
    case checks::DriverFit::kReleaseUnknown:
      return "  runs at least through minor-version compatibility (its release is not known)";
    case checks::DriverFit::kFull: return "  ok";
    default: return "";
  }
}

std::vector<std::string> names_of(const std::set<std::pair<int, std::string>>& archs) {
  std::vector<std::string> out;
  for (const auto& [rank, name] : archs)
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::string joined(const std::vector<std::string>& v, const std::string& empty = "-") {
  if (v.empty()) return empty;
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON

ordered_json optional_text(const std::optional<cuda::DriverVersion>& v) {
  return v ? ordered_json(v->text) : ordered_json(nullptr);
}

std::string cuda_json(const queries::CudaSummary& s) {
  ordered_json out;
  out["schema"] = 1;
  ordered_json driver;
  driver["version"] = optional_text(s.target.driver);
  driver["source"] = s.target.driver ? ordered_json(s.target.driver_source) : ordered_json(nullptr);
  driver["cuda"] = s.driver_cuda ? ordered_json(s.driver_cuda->str()) : ordered_json(nullptr);
  if (s.forward_compat)
    driver["forward_compat"] = {{"path", s.forward_compat->path},
                                {"version", s.forward_compat->version.text},
                                {"where", s.forward_compat->where}};
  else driver["forward_compat"] = nullptr;
  driver["effective"] = optional_text(s.effective_driver);
  driver["problems"] = s.target.problems;
  out["driver"] = std::move(driver);

  ordered_json gpus = ordered_json::array();
  for (const cuda::Gpu& g : s.target.gpus)
    gpus.push_back({{"name", g.name},
                    {"arch", "sm_" + std::to_string(g.sm)},
                    {"compute_capability", cuda::compute_capability_name(g.sm)}});
  out["gpus"] = std::move(gpus);
  out["gpus_source"] = s.target.gpus.empty() ? ordered_json(nullptr) : ordered_json(s.target.gpus_source);

  ordered_json runtimes = ordered_json::array();
  for (const queries::CudaRuntimeRow& r : s.runtimes) {
    const checks::CudaRuntime& rt = *r.runtime;
    ordered_json j;
    j["path"] = rt.path;
    j["soname"] = rt.soname;
    j["cuda_major"] = rt.major;
    j["version"] = rt.version ? ordered_json(rt.version->str()) : ordered_json(nullptr);
    j["version_source"] = rt.version_source.empty() ? ordered_json(nullptr) : ordered_json(rt.version_source);
    j["package"] = rt.owner ? ordered_json(rt.owner->name) : ordered_json(nullptr);
    j["package_version"] = rt.owner ? ordered_json(rt.owner->version) : ordered_json(nullptr);
    j["origin"] = rt.origin;
    const checks::DriverRequirement& need = r.verdict.need;
    std::optional<bool> ok = driver_ok(r.verdict.fit);
    j["driver_required"] = optional_text(need.full ? need.full : need.minor_floor);
    j["driver_minor_compat"] = optional_text(need.minor_floor);
    j["driver_ok"] = ok ? ordered_json(*ok) : ordered_json(nullptr);
    j["minor_compat"] = r.verdict.fit == checks::DriverFit::kMinorCompat;
    j["used_by"] = r.users;
    runtimes.push_back(std::move(j));
  }
  out["runtimes"] = std::move(runtimes);
  ordered_json missing = ordered_json::array();
  for (const checks::MissingRuntime& m : s.missing_runtimes)
    missing.push_back({{"soname", m.soname}, {"cuda_major", m.major}, {"needed_by", m.needed_by}});
  out["missing_runtimes"] = std::move(missing);

  ordered_json packages = ordered_json::array();
  for (const queries::CudaPackageRow& p : s.packages) {
    ordered_json j;
    j["name"] = p.name.empty() ? ordered_json(nullptr) : ordered_json(p.name);
    j["file"] = p.file.empty() ? ordered_json(nullptr) : ordered_json(p.file);
    j["version"] = p.name.empty() ? ordered_json(nullptr) : ordered_json(p.version);
    j["cuda_majors"] = std::vector<int>(p.cuda_majors.begin(), p.cuda_majors.end());
    ordered_json uses = ordered_json::array();
    for (const auto& [soname, origin] : p.uses)
      uses.push_back({{"library", soname}, {"from", origin ? *origin : "not found"}});
    j["uses"] = std::move(uses);
    j["files_with_gpu_code"] = p.files_with_gpu_code;
    j["sass"] = names_of(p.sass);
    j["ptx"] = names_of(p.ptx);
    ordered_json coverage = ordered_json::object();
    for (const auto& [sm, kind] : p.coverage) coverage["sm_" + std::to_string(sm)] = cuda::coverage_kind_name(kind);
    j["coverage"] = std::move(coverage);
    packages.push_back(std::move(j));
  }
  out["packages"] = std::move(packages);
  return out.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------------
// Text

// Left-aligned columns, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i)
      line += " " + row[i] + (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 1, ' ') : "");
    out << line << "\n";
  }
  return out.str();
}

// The widest a line of `cuda` is: a table that would be wider is stacked, one package a block.
constexpr size_t kMaxWidth = 100;

// The rows of table() one block each: the first column, then "HEAD: value" lines wrapped to
// kMaxWidth (a long list breaks after its commas).
std::string stacked(const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream out;
  const std::vector<std::string>& head = rows.front();
  for (size_t r = 1; r < rows.size(); ++r) {
    out << "  " << rows[r][0] << "\n";
    for (size_t i = 1; i < rows[r].size() && i < head.size(); ++i) {
      std::string label = "    " + head[i] + ": ";
      out << label << support::wrap(rows[r][i], kMaxWidth - label.size(), std::string(label.size(), ' ')) << "\n";
    }
  }
  return out.str();
}

// table(), or stacked() where a line of the table would be wider than kMaxWidth.
std::string table_or_stacked(const std::vector<std::vector<std::string>>& rows) {
  std::string t = table(rows);
  std::istringstream lines(t);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > kMaxWidth) return stacked(rows);
  return t;
}

std::string cuda_text(const queries::CudaSummary& s) {
  std::ostringstream out;
  out << "driver: ";
  if (s.target.driver) {
    out << s.target.driver->text << " (" << s.target.driver_source << ")";
    if (s.driver_cuda) out << ", runs CUDA " << s.driver_cuda->str() << " and older";
    else if (s.driver_beyond_table)
      out << ", newer than this envdoctor's CUDA table: which CUDA it runs is unknown (update envdoctor)";
    out << "\n";
  } else {
    out << "none found (pass --driver VERSION)\n";
  }
  if (s.forward_compat)
    out << "  forward compatibility: " << s.forward_compat->path << " (" << s.forward_compat->where << ") implements "
        << s.forward_compat->version.text << " for the CUDA runtimes\n";
  for (const std::string& p : s.target.problems) out << "  problem: " << p << "\n";
  out << "GPUs: ";
  if (s.target.gpus.empty()) out << "none found (pass --gpu sm_XX)\n";
  else out << "(" << s.target.gpus_source << ")\n";
  for (const cuda::Gpu& g : s.target.gpus)
    out << "  " << (g.name == "sm_" + std::to_string(g.sm) ? "" : g.name + "  ") << "sm_" << g.sm << " ("
        << cuda::compute_capability_name(g.sm) << ")\n";

  out << "\nCUDA runtimes:";
  if (s.runtimes.empty() && s.missing_runtimes.empty()) out << " none";
  out << "\n";
  for (const queries::CudaRuntimeRow& r : s.runtimes) {
    const checks::CudaRuntime& rt = *r.runtime;
    std::optional<cuda::DriverVersion> need = r.verdict.need.full ? r.verdict.need.full : r.verdict.need.minor_floor;
    std::string verdict = verdict_text(r.verdict.fit);
    out << "  " << rt.soname << "  " << (rt.version ? rt.version->str() : std::to_string(rt.major) + ".x") << "  "
        << (rt.owner ? rt.owner->name + " " + rt.owner->version : rt.origin)
        << "  needs driver >= " << (need ? need->text : std::string("?")) << verdict << "\n";
    out << "    " << rt.path << "\n";
    out << "    used by: "
        << support::wrap(joined(r.users, "nothing in the environment"), kMaxWidth - 13, "             ") << "\n";
  }
  for (const checks::MissingRuntime& m : s.missing_runtimes) {
    out << "  " << m.soname << "  not found\n";
    out << "    needed by: " << support::wrap(joined(m.needed_by), kMaxWidth - 15, "               ") << "\n";
  }

  out << "\npackages with GPU code or CUDA libraries:";
  if (s.packages.empty()) out << " none";
  out << "\n";
  if (!s.packages.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"PACKAGE", "VERSION", "CUDA", "LOADS", "SASS", "PTX"};
    for (const cuda::Gpu& g : s.target.gpus) head.push_back("sm_" + std::to_string(g.sm));
    rows.push_back(head);
    for (const queries::CudaPackageRow& p : s.packages) {
      std::vector<std::string> majors, uses;
      for (int m : p.cuda_majors) majors.push_back(std::to_string(m));
      for (const auto& [soname, origin] : p.uses) uses.push_back(soname + (origin ? "" : " (not found)"));
      std::vector<std::string> row = {p.name.empty() ? p.file + " (no package)" : p.name,
                                      p.version.empty() ? "-" : p.version,
                                      joined(majors),
                                      joined(uses),
                                      joined(names_of(p.sass)),
                                      joined(names_of(p.ptx))};
      for (const cuda::Gpu& g : s.target.gpus) {
        auto it = p.coverage.find(g.sm);
        row.push_back(it == p.coverage.end() ? "-" : cuda::coverage_kind_name(it->second));
      }
      rows.push_back(std::move(row));
    }
    out << table_or_stacked(rows);
  }
  return out.str();
}

}  // namespace

std::string render_cuda_json(const queries::CudaSummary& summary) { return cuda_json(summary); }
std::string render_cuda_text(const queries::CudaSummary& summary) { return cuda_text(summary); }

}  // namespace envdoctor::report
