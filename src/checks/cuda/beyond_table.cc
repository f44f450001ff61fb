#include "checks/cuda/beyond_table.h"

#include <algorithm>
#include <filesystem>

#include "cuda/arch.h"

namespace envdoctor::checks {

using environment::Environment;

namespace {

const char* kFix = "; fix: update envdoctor";

std::string sm_name(int sm) { return "sm_" + std::to_string(sm); }

// "libcudart.so.13 13.5 (nvidia-cuda-runtime 13.5.37)": the release and where it was read.
std::string runtime_name(const CudaRuntime& rt) {
  std::string s = rt.soname + " " + (rt.version ? rt.version->str() : std::to_string(rt.major) + ".x");
  if (!rt.version_source.empty()) s += " (" + rt.version_source + ")";
  else if (rt.owner) s += " (" + rt.owner->name + " " + rt.owner->version + ")";
  return s;
}

std::string table_release(const cuda::CudaTables& tables) {
  std::optional<cuda::MajorMinor> newest = tables.newest_release();
  return newest ? newest->str() : std::string("none");
}

// Files whose PTX would have to run on some GPU but whose ISA has no driver in the table.
std::vector<std::string> unknown_ptx_notes(const CudaInventory& inv, const cuda::CudaTables& tables,
                                           const CudaTarget& target, const std::optional<cuda::DriverVersion>& driver) {
  std::vector<std::string> files;
  cuda::MajorMinor isa;
  for (const GpuCode& g : inv.gpu_code)
    for (const cuda::Gpu& gpu : target.gpus) {
      // The verdict's own rule (gpu_coverage: an NVIDIA library's PTX of its lowest architecture
      // is not what runs), so that a note never contradicts the verdict.
      cuda::Coverage c = gpu_coverage(g, gpu.sm, driver, tables);
      if (!c.ptx_isa_unknown || c.deciding.empty()) continue;
      isa = std::max(isa, cuda::MajorMinor{c.deciding.front().ptx_isa_major, c.deciding.front().ptx_isa_minor});
      if (std::find(files.begin(), files.end(), g.file->path) == files.end()) files.push_back(g.file->path);
    }
  if (files.empty()) return {};
  std::optional<cuda::MajorMinor> known = tables.newest_ptx_isa_with_driver();
  std::string where = files.front() + (files.size() > 1 ? " and " + std::to_string(files.size() - 1) + " more" : "");
  return {"PTX ISA " + isa.str() + " of " + where + " is newer than this envdoctor's CUDA table (" +
          (known ? known->str() : std::string("none")) + "): whether driver " +
          (driver ? driver->text : std::string("?")) + " can JIT it is unknown" + kFix};
}

}  // namespace

std::vector<std::string> cuda_beyond_table_notes(const CudaInventory& inv, const cuda::CudaTables& tables,
                                                 const CudaTarget& target,
                                                 const std::optional<cuda::DriverVersion>& driver) {
  std::vector<std::string> notes;
  for (const CudaRuntime& rt : inv.runtimes)
    if (runtime_beyond_table(rt, tables))
      notes.push_back(runtime_name(rt) + " is newer than this envdoctor's CUDA table (" + table_release(tables) +
                      "): driver requirement unknown" + kFix);
  if (driver && tables.driver_beyond_table(*driver)) {
    std::optional<cuda::DriverVersion> newest = tables.newest_driver();
    notes.push_back("driver " + driver->text + " is newer than this envdoctor's CUDA table (driver " +
                    (newest ? newest->text : std::string("none")) + ", CUDA " + table_release(tables) +
                    "): the CUDA releases it runs beyond " + table_release(tables) + " are unknown" + kFix);
  }
  for (const cuda::Gpu& gpu : target.gpus)
    if (tables.gpu_beyond_table(gpu.sm))
      notes.push_back("GPU " + sm_name(gpu.sm) + " (compute capability " + cuda::compute_capability_name(gpu.sm) +
                      ") is newer than this envdoctor's CUDA table (up to " + sm_name(tables.newest_sm()) +
                      "): which code runs on it is unknown" + kFix);
  std::vector<std::string> ptx = unknown_ptx_notes(inv, tables, target, driver);
  notes.insert(notes.end(), ptx.begin(), ptx.end());
  return notes;
}

std::vector<Finding> check_cuda_minimum_gpu(const Environment& env, const CudaInventory& inv,
                                            const cuda::CudaTables& tables, const CudaTarget& target) {
  std::vector<Finding> out;
  // Where each major is present: its runtimes, else its first library.
  std::vector<std::pair<const CudaLibrary*, const CudaRuntime*>> places;
  for (const CudaRuntime& rt : inv.runtimes) places.push_back({inv.library(rt.path), &rt});
  for (const CudaLibrary& lib : inv.libraries) {
    bool has_place = std::any_of(places.begin(), places.end(), [&](const auto& p) {
      return p.first ? p.first->major == lib.major : p.second->major == lib.major;
    });
    if (!has_place) places.push_back({&lib, nullptr});
  }
  for (const auto& [lib, rt] : places) {
    int major = rt ? rt->major : lib->major;
    std::optional<int> minimum = tables.minimum_sm(major);
    if (!minimum) continue;
    for (const cuda::Gpu& gpu : target.gpus) {
      if (tables.current_sm(gpu.sm) >= *minimum) continue;
      const python::Distribution* owner = rt ? rt->owner : lib->owner;
      std::string path = rt ? rt->path : lib->path;
      std::string soname = rt ? rt->soname : lib->soname;
      Finding f;
      f.code = Code::kGpuArchUnsupported;
      f.severity = Severity::kError;
      f.file = path;
      f.library = soname;
      if (owner) f.package = owner->name;
      f.arch = sm_name(gpu.sm);
      std::string cc = cuda::compute_capability_name(gpu.sm);
      f.message = "CUDA " + std::to_string(major) + " does not support " + sm_name(gpu.sm) + " (compute capability " +
                  cc + "): " + soname + " needs compute capability " + cuda::compute_capability_name(*minimum) +
                  " or newer";
      std::string users;
      for (const std::string& u : inv.user_names(env, path)) users += (users.empty() ? "" : ", ") + u;
      f.hint = "CUDA " + std::to_string(major) + " dropped GPUs older than compute capability " +
               cuda::compute_capability_name(*minimum) + ": install builds for a CUDA major that supports " + cc +
               " of " + (users.empty() ? "what uses " + soname : users);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace envdoctor::checks
