// `envdoctor cuda`: the CUDA side of an environment at a glance. The driver and the GPUs, the CUDA
// runtimes present and who loads each (the load model's resolutions, not file names), and which
// GPU architectures each package's binaries carry code for. The facts are gathered once
// (checks::index_cuda, the same as `check` uses) and rendered at the end, as a table or as JSON.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "checks/cuda_checks.h"
#include "checks/environment.h"
#include "checks/knowledge.h"
#include "checks/load_checks.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cuda/arch.h"
#include "cuda/tables.h"

namespace envdoctor::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct RuntimeRow {
  const checks::CudaRuntime* runtime;
  checks::DriverRequirement need;
  std::optional<bool> driver_ok;  // nullopt: no driver known
  bool minor_compat = false;      // runs only through minor-version compatibility
  std::vector<std::string> users;
};

struct PackageRow {
  std::string name;  // "" for files no package owns
  std::string version;
  size_t files_with_gpu_code = 0;
  std::set<std::pair<int, std::string>> sass, ptx;  // (sm * 4 + variant rank, name)
  std::set<int> cuda_majors;
  std::map<std::string, std::string> uses;  // soname -> "origin"
  std::map<int, cuda::Coverage::Kind> coverage;  // GPU sm -> the worst verdict over its files
};

struct Summary {
  checks::CudaTarget target;
  std::optional<cuda::DriverVersion> effective_driver;
  std::optional<cuda::MajorMinor> driver_cuda;
  bool driver_beyond_table = false;
  std::optional<checks::ForwardCompat> forward_compat;
  std::vector<RuntimeRow> runtimes;
  std::vector<PackageRow> packages;
};

std::string canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

int arch_rank(const std::string& name) {
  std::optional<int> sm = checks::parse_gpu_arch(name);
  char last = name.empty() ? 0 : name.back();
  return (sm ? *sm : 0) * 4 + (last == 'f' ? 1 : last == 'a' ? 2 : 0);
}

int severity_rank(cuda::Coverage::Kind k) {
  switch (k) {
    case cuda::Coverage::Kind::kNoDeviceCode: return 0;
    case cuda::Coverage::Kind::kSass: return 1;
    case cuda::Coverage::Kind::kPtxJit: return 2;
    case cuda::Coverage::Kind::kUnsupported: return 3;
    case cuda::Coverage::Kind::kUnknown: return 0;
  }
  return 0;
}

RuntimeRow runtime_row(const checks::Environment& env, const checks::CudaInventory& inv,
                       const checks::CudaRuntime& rt, const cuda::CudaTables& tables,
                       const std::optional<cuda::DriverVersion>& driver) {
  RuntimeRow row{&rt, checks::driver_requirement(rt, tables), std::nullopt, false, inv.user_names(env, rt.path)};
  if (driver && !row.need.unknown) {
    bool full = row.need.full && *driver >= *row.need.full;
    bool minor = row.need.minor_floor && *driver >= *row.need.minor_floor;
    row.driver_ok = full || minor;
    row.minor_compat = !full && minor;
  }
  return row;
}

PackageRow& row_for(std::map<std::string, PackageRow>& rows, const python::Distribution* d) {
  PackageRow& row = rows[d ? d->name : ""];
  if (d) {
    row.name = d->name;
    row.version = d->version;
  }
  return row;
}

std::vector<PackageRow> package_rows(const checks::Environment& env, const checks::CudaInventory& inv,
                                     const cuda::CudaTables& tables, const Summary& s) {
  std::map<std::string, PackageRow> rows;
  for (const checks::GpuCode& g : inv.gpu_code) {
    PackageRow& row = row_for(rows, g.file->owners.empty() ? nullptr : g.file->owners.front());
    ++row.files_with_gpu_code;
    for (const std::string& a : g.sass) row.sass.emplace(arch_rank(a), a);
    for (const std::string& a : g.ptx) row.ptx.emplace(arch_rank(a), a);
    for (const cuda::Gpu& gpu : s.target.gpus) {
      cuda::Coverage c = cuda::classify(g.fatbins, gpu.sm, s.effective_driver, tables);
      auto [it, fresh] = row.coverage.emplace(gpu.sm, c.kind);
      if (!fresh && severity_rank(c.kind) > severity_rank(it->second)) it->second = c.kind;
    }
  }
  // What each package's files load directly, by the load model.
  std::map<std::string, const checks::CudaLibrary*> libraries;
  for (const checks::CudaLibrary& lib : inv.libraries) libraries[canonical(lib.path)] = &lib;
  for (const checks::ElfRecord& r : env.elf_files) {
    auto needs = inv.needs.find(canonical(r.path));
    if (needs == inv.needs.end()) continue;
    const python::Distribution* owner = r.owners.empty() ? nullptr : r.owners.front();
    for (const std::string& target : needs->second) {
      auto it = libraries.find(target);
      if (it == libraries.end() || it->second->owner == owner) continue;
      PackageRow& row = row_for(rows, owner);
      row.uses[it->second->soname] = it->second->origin;
      row.cuda_majors.insert(it->second->major);
    }
  }
  for (const checks::CudaLibrary& lib : inv.libraries)
    if (lib.owner) row_for(rows, lib.owner).cuda_majors.insert(lib.major);
  std::vector<PackageRow> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
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

std::string render_json(const Summary& s) {
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
  else
    driver["forward_compat"] = nullptr;
  driver["effective"] = optional_text(s.effective_driver);
  driver["problems"] = s.target.problems;
  out["driver"] = std::move(driver);

  ordered_json gpus = ordered_json::array();
  for (const cuda::Gpu& g : s.target.gpus)
    gpus.push_back({{"name", g.name}, {"arch", "sm_" + std::to_string(g.sm)},
                    {"compute_capability", cuda::compute_capability_name(g.sm)}});
  out["gpus"] = std::move(gpus);
  out["gpus_source"] = s.target.gpus.empty() ? ordered_json(nullptr) : ordered_json(s.target.gpus_source);

  ordered_json runtimes = ordered_json::array();
  for (const RuntimeRow& r : s.runtimes) {
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
    j["driver_required"] = optional_text(r.need.full ? r.need.full : r.need.minor_floor);
    j["driver_minor_compat"] = optional_text(r.need.minor_floor);
    j["driver_ok"] = r.driver_ok ? ordered_json(*r.driver_ok) : ordered_json(nullptr);
    j["minor_compat"] = r.minor_compat;
    j["used_by"] = r.users;
    runtimes.push_back(std::move(j));
  }
  out["runtimes"] = std::move(runtimes);

  ordered_json packages = ordered_json::array();
  for (const PackageRow& p : s.packages) {
    ordered_json j;
    j["name"] = p.name.empty() ? ordered_json(nullptr) : ordered_json(p.name);
    j["version"] = p.name.empty() ? ordered_json(nullptr) : ordered_json(p.version);
    j["cuda_majors"] = std::vector<int>(p.cuda_majors.begin(), p.cuda_majors.end());
    ordered_json uses = ordered_json::array();
    for (const auto& [soname, origin] : p.uses) uses.push_back({{"library", soname}, {"from", origin}});
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

std::string render_text(const Summary& s) {
  std::ostringstream out;
  out << "driver: ";
  if (s.target.driver) {
    out << s.target.driver->text << " (" << s.target.driver_source << ")";
    if (s.driver_cuda) out << ", runs CUDA " << s.driver_cuda->str() << " and older";
    else if (s.driver_beyond_table) out << ", newer than this envdoctor's CUDA table: which CUDA it runs is unknown (update envdoctor)";
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
  if (s.runtimes.empty()) out << " none";
  out << "\n";
  for (const RuntimeRow& r : s.runtimes) {
    const checks::CudaRuntime& rt = *r.runtime;
    std::optional<cuda::DriverVersion> need = r.need.full ? r.need.full : r.need.minor_floor;
    std::string verdict = r.need.unknown ? "  newer than this envdoctor's CUDA table: update envdoctor"
                          : !r.driver_ok ? "" : !*r.driver_ok ? "  TOO NEW for this driver"
                                          : r.minor_compat  ? "  runs through minor-version compatibility"
                                                            : "  ok";
    out << "  " << rt.soname << "  " << (rt.version ? rt.version->str() : std::to_string(rt.major) + ".x") << "  "
        << (rt.owner ? rt.owner->name + " " + rt.owner->version : rt.origin) << "  needs driver >= "
        << (need ? need->text : std::string("?")) << verdict << "\n";
    out << "    " << rt.path << "\n";
    out << "    used by: " << joined(r.users, "nothing in the environment") << "\n";
  }

  out << "\npackages with GPU code or CUDA libraries:";
  if (s.packages.empty()) out << " none";
  out << "\n";
  if (!s.packages.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"PACKAGE", "VERSION", "CUDA", "LOADS", "SASS", "PTX"};
    for (const cuda::Gpu& g : s.target.gpus) head.push_back("sm_" + std::to_string(g.sm));
    rows.push_back(head);
    for (const PackageRow& p : s.packages) {
      std::vector<std::string> majors, uses;
      for (int m : p.cuda_majors) majors.push_back(std::to_string(m));
      for (const auto& [soname, origin] : p.uses) uses.push_back(soname);
      std::vector<std::string> row = {p.name.empty() ? "(no package)" : p.name, p.version.empty() ? "-" : p.version,
                                      joined(majors), joined(uses), joined(names_of(p.sass)), joined(names_of(p.ptx))};
      for (const cuda::Gpu& g : s.target.gpus) {
        auto it = p.coverage.find(g.sm);
        row.push_back(it == p.coverage.end() ? "-" : cuda::coverage_kind_name(it->second));
      }
      rows.push_back(std::move(row));
    }
    out << table(rows);
  }
  return out.str();
}

}  // namespace

int run_cuda(const CudaCommandOptions& options) {
  std::string error;
  std::optional<checks::CudaTarget> target = checks::resolve_cuda_target(options.gpus, options.driver, &error);
  if (!target) {
    std::cerr << "envdoctor: " << error << "\n";
    return 2;
  }
  std::optional<Session> session = open_session({options.python, options.prefix, false, options.loader});
  if (!session) return 2;
  checks::Environment* env = session->env.get();
  const checks::Knowledge* knowledge = &session->knowledge;
  const cuda::CudaTables* tables = &session->tables;
  checks::LoadCheckResult loads = checks::check_loads(*env, *knowledge);
  checks::CudaInventory inv = checks::index_cuda(*env, *knowledge, loads.resolutions);

  Summary s;
  s.target = std::move(*target);
  s.forward_compat = inv.forward_compat;
  s.effective_driver = checks::effective_driver(inv, s.target);
  s.driver_cuda = s.target.driver_cuda;
  if (!s.driver_cuda && s.target.driver) s.driver_cuda = checks::newest_cuda_for_driver(*s.target.driver, *tables);
  s.driver_beyond_table = !s.driver_cuda && s.target.driver && tables->driver_beyond_table(*s.target.driver);
  for (const checks::CudaRuntime& rt : inv.runtimes)
    s.runtimes.push_back(runtime_row(*env, inv, rt, *tables, s.effective_driver));
  s.packages = package_rows(*env, inv, *tables, s);

  std::cout << (options.json ? render_json(s) : render_text(s));
  std::cout.flush();
  return 0;
}

}  // namespace envdoctor::cli
