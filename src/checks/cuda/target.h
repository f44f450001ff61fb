// The GPUs and driver that the CUDA checks judge against: given by --gpu and --driver, read off a
// node's snapshot, or detected on this machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/arch.h"
#include "cuda/driver.h"
#include "cuda/versions.h"

namespace envdoctor::checks {

// The GPUs and driver the checks are for.
struct CudaTarget {
  std::vector<cuda::Gpu> gpus;                  // empty: the arch checks are skipped
  std::string gpus_source;                      // "--gpu", "NVML", "nvidia-smi"
  std::optional<cuda::DriverVersion> driver;    // the kernel module's; nullopt: driver checks skipped
  std::string driver_source;                    // "--driver", "/proc/driver/nvidia/version", ...
  std::optional<cuda::MajorMinor> driver_cuda;  // the newest CUDA the driver reports (NVML)
  std::vector<std::string> problems;            // from detection
  // The driver libraries the node provides (--node: its snapshot's cuda.driver_libraries, by
  // SONAME); nullopt where not known, when every one is taken as present with the driver.
  std::optional<std::vector<std::string>> driver_libraries;
};

// The target from `--gpu` and `--driver` arguments, filling what is missing from this machine
// (cuda::detect_driver, run only when something is missing). nullopt with `error` set on an
// argument that does not parse.
std::optional<CudaTarget> resolve_cuda_target(const std::vector<std::string>& gpu_args, const std::string& driver_arg,
                                              std::string* error);

}  // namespace envdoctor::checks
