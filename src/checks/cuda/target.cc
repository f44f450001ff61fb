#include "checks/cuda/target.h"

#include <algorithm>

#include "cuda/tables.h"

namespace envdoctor::checks {

using cuda::DriverVersion;

std::optional<CudaTarget> resolve_cuda_target(const std::vector<std::string>& gpu_args, const std::string& driver_arg,
                                              std::string* error) {
  CudaTarget t;
  std::optional<cuda::CudaTables> tables;
  if (!gpu_args.empty()) {
    tables = cuda::load_cuda_tables(cuda::default_data_dir(), error);
    if (!tables) return std::nullopt;
  }
  for (const std::string& arg : gpu_args) {
    std::optional<int> sm = cuda::parse_gpu_arch(arg);
    if (!sm) {
      *error = "--gpu " + arg + ": not a GPU architecture (sm_86, sm_90a, 8.6 or 86)";
      return std::nullopt;
    }
    std::string why;
    if (!cuda::gpu_arch_possible(*tables, *sm, &why)) {
      *error = "--gpu " + arg + ": " + why;
      return std::nullopt;
    }
    bool seen = std::any_of(t.gpus.begin(), t.gpus.end(), [&](const cuda::Gpu& g) { return g.sm == *sm; });
    if (!seen) t.gpus.push_back({"sm_" + std::to_string(*sm), *sm});
  }
  if (!gpu_args.empty()) t.gpus_source = "--gpu";
  if (!driver_arg.empty()) {
    t.driver = DriverVersion::parse(driver_arg);
    if (!t.driver) {
      *error = "--driver " + driver_arg + ": not a driver version (580.65.06)";
      return std::nullopt;
    }
    t.driver_source = "--driver";
  }
  if (t.gpus.empty() || !t.driver) {
    cuda::DriverInfo info = cuda::detect_driver();
    if (t.gpus.empty()) {
      t.gpus = info.gpus;
      t.gpus_source = info.gpus_source;
    }
    if (!t.driver && info.version) {
      t.driver = info.version;
      t.driver_source = info.version_source;
      t.driver_cuda = info.cuda;
    }
    t.problems = info.problems;
  }
  return t;
}

}  // namespace envdoctor::checks
