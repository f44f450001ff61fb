#include "queries/cuda_summary.h"

#include "checks/package_loads.h"

namespace envdoctor::queries {

using checks::check_loads;
using checks::cuda_path_key;
using checks::CudaInventory;
using checks::CudaLibrary;
using checks::CudaRuntime;
using checks::CudaTarget;
using checks::effective_driver;
using checks::gpu_coverage;
using checks::GpuCode;
using checks::index_cuda;
using checks::LoadCheckResult;
using checks::MissingRuntime;
using checks::newest_cuda_for_driver;
using checks::runtime_on_driver;

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;

namespace {

// Sorts "sm_90" before "sm_90f" before "sm_90a" before "sm_100".
int arch_rank(const std::string& name) {
  std::optional<int> sm = cuda::parse_gpu_arch(name);
  char last = name.empty() ? 0 : name.back();
  return (sm ? *sm : 0) * 4 + (last == 'f' ? 1 : last == 'a' ? 2 : 0);
}

// The worse of two verdicts on one GPU, for a package's column.
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

// The row of `d`, or of `file` when no package owns it: packages first (by name), then files (by
// path).
CudaPackageRow& row_for(std::map<std::string, CudaPackageRow>& rows, const python::Distribution* d,
                        const std::string& file) {
  CudaPackageRow& row = rows[d ? "0" + d->name : "1" + file];
  if (d) {
    row.name = d->name;
    row.version = d->version;
  } else {
    row.file = file;
  }
  return row;
}

std::vector<CudaPackageRow> package_rows(const Environment& env, const CudaInventory& inv,
                                         const cuda::CudaTables& tables, const CudaSummary& s) {
  std::map<std::string, CudaPackageRow> rows;
  for (const GpuCode& g : inv.gpu_code) {
    CudaPackageRow& row = row_for(rows, g.file->owners.empty() ? nullptr : g.file->owners.front(), g.file->path);
    ++row.files_with_gpu_code;
    for (const std::string& a : g.sass) row.sass.emplace(arch_rank(a), a);
    for (const std::string& a : g.ptx) row.ptx.emplace(arch_rank(a), a);
    for (const cuda::Gpu& gpu : s.target.gpus) {
      cuda::Coverage c = gpu_coverage(g, gpu.sm, s.effective_driver, tables);
      auto [it, fresh] = row.coverage.emplace(gpu.sm, c.kind);
      if (!fresh && severity_rank(c.kind) > severity_rank(it->second)) it->second = c.kind;
    }
  }
  // What each package's files load directly, by the load model.
  std::map<std::string, const CudaLibrary*> libraries;
  for (const CudaLibrary& lib : inv.libraries) libraries[cuda_path_key(env, lib.path)] = &lib;
  for (const ElfRecord& r : env.elf_files) {
    auto needs = inv.needs.find(cuda_path_key(env, r.path));
    if (needs == inv.needs.end()) continue;
    const python::Distribution* owner = r.owners.empty() ? nullptr : r.owners.front();
    for (const std::string& target : needs->second) {
      auto it = libraries.find(target);
      // A package's own CUDA libraries are its own; a file no package owns uses the others.
      if (it == libraries.end() || (owner && it->second->owner == owner)) continue;
      CudaPackageRow& row = row_for(rows, owner, r.path);
      row.uses[it->second->soname] = it->second->origin;
      row.cuda_majors.insert(it->second->major);
    }
  }
  // A runtime that is not found is still one the file uses: of its major, and missing.
  for (const MissingRuntime& missing : inv.missing_runtimes)
    for (const std::string& file : missing.needed_by) {
      CudaPackageRow& row = row_for(rows, env.owner(file), file);
      row.uses[missing.soname] = std::nullopt;
      row.cuda_majors.insert(missing.major);
    }
  for (const CudaLibrary& lib : inv.libraries)
    if (lib.owner) row_for(rows, lib.owner, lib.path).cuda_majors.insert(lib.major);
  std::vector<CudaPackageRow> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace

CudaSummary summarize_cuda(const Environment& env, const CudaInventory& inventory, const cuda::CudaTables& tables,
                           CudaTarget target) {
  CudaSummary s;
  s.target = std::move(target);
  s.forward_compat = inventory.forward_compat;
  s.effective_driver = effective_driver(inventory, s.target);
  s.driver_cuda = s.target.driver_cuda;
  if (!s.driver_cuda && s.target.driver) s.driver_cuda = newest_cuda_for_driver(*s.target.driver, tables);
  s.driver_beyond_table = !s.driver_cuda && s.target.driver && tables.driver_beyond_table(*s.target.driver);
  for (const CudaRuntime& rt : inventory.runtimes)
    s.runtimes.push_back({&rt, runtime_on_driver(rt, tables, s.effective_driver), inventory.user_names(env, rt.path)});
  s.missing_runtimes = inventory.missing_runtimes;
  s.packages = package_rows(env, inventory, tables, s);
  return s;
}

CudaSummary summarize_environment_cuda(const environment::Session& session) {
  const Environment& env = *session.env;
  const cuda::CudaTables& tables = session.tables;
  // The load graph's edges are not wanted: the CUDA rows read who loads what, not how. The
  // settings name no node, so the import model runs what packages load as on a node without a
  // GPU; the node judges the rows (summarize_cuda).
  checks::CheckSettings settings;
  settings.edges = false;
  checks::Context ctx{env, session.knowledge, tables, settings};
  LoadCheckResult loads = check_loads(ctx);
  // As check's inventory: what packages open at first use counts as used (checks/run.cc).
  auto inventory = std::make_shared<const CudaInventory>(
      index_cuda(ctx, loads.resolutions, loads.findings,
                 checks::check_package_loads(ctx, loads.resolutions, &loads.processes).opened));
  CudaSummary summary = summarize_cuda(env, *inventory, tables, session.node);
  summary.inventory = std::move(inventory);
  return summary;
}

}  // namespace envdoctor::queries
