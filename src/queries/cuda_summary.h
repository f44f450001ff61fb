// `envdoctor cuda`: the CUDA side of an environment at a glance, computed once here and rendered by
// src/report/cuda.cc. The driver and the GPUs, the CUDA runtimes present and who loads each (the
// load model's resolutions, not file names), and which GPU architectures each package's binaries
// carry code for. Every verdict comes from checks/cuda/inventory.h, the same as `check` uses.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checks/cuda/inventory.h"
#include "checks/load_checks.h"
#include "environment/knowledge.h"
#include "environment/session.h"

namespace envdoctor::queries {

struct CudaRuntimeRow {
  const checks::CudaRuntime* runtime;
  checks::RuntimeOnDriver verdict;
  std::vector<std::string> users;
};

// One package, or one file that no package owns (each such file a row of its own: two files of
// one name, or of two CUDA majors, are not one thing).
struct CudaPackageRow {
  std::string name;  // "" for a file no package owns
  std::string file;  // that file's path; "" for a package
  std::string version;
  size_t files_with_gpu_code = 0;
  std::set<std::pair<int, std::string>> sass, ptx;  // (sm * 4 + variant rank, name)
  std::set<int> cuda_majors;
  // soname -> where the loader finds it (CudaLibrary::origin); nullopt where it finds none
  std::map<std::string, std::optional<std::string>> uses;
  std::map<int, cuda::Coverage::Kind> coverage;  // GPU sm -> the worst verdict over its files (gpu_coverage)
};

struct CudaSummary {
  checks::CudaTarget target;
  std::optional<cuda::DriverVersion> effective_driver;
  std::optional<cuda::MajorMinor> driver_cuda;
  bool driver_beyond_table = false;
  std::optional<checks::ForwardCompat> forward_compat;
  std::vector<CudaRuntimeRow> runtimes;
  std::vector<checks::MissingRuntime> missing_runtimes;
  std::vector<CudaPackageRow> packages;
  // What the runtime rows point into, when the summary made its own (summarize_environment_cuda).
  std::shared_ptr<const checks::CudaInventory> inventory;
};

CudaSummary summarize_cuda(const environment::Environment& env, const checks::CudaInventory& inventory,
                           const cuda::CudaTables& tables, checks::CudaTarget target);

// `envdoctor cuda` on the session's environment and node: its load check (who loads which
// runtime), the CUDA facts gathered from it, then summarize_cuda.
CudaSummary summarize_environment_cuda(const environment::Session& session);

}  // namespace envdoctor::queries
