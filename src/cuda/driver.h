// The machine's NVIDIA driver and GPUs, found without creating a CUDA context.
//
// The driver version comes from the first source that has it: the kernel module's
// /proc/driver/nvidia/version, NVML (libnvidia-ml.so.1 through dlopen, when installed), and the
// real file name of libcuda.so.1 (libcuda.so.580.65.06). The kernel module and the user-space
// libcuda must agree, or every CUDA call fails with "Driver/library version mismatch"; a
// disagreement between the sources is reported as a problem. GPUs (name, compute capability)
// come from NVML, else from `nvidia-smi --query-gpu=name,compute_cap`, else there are none.
// On a machine without a driver everything is empty and nothing is an error.
//
// The text parsers are separate functions so that tests can feed them the exact strings each
// source prints.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/versions.h"

namespace envdoctor::cuda {

struct Gpu {
  std::string name;  // "NVIDIA H200"
  int sm = 0;        // 90
};

struct DriverInfo {
  std::optional<DriverVersion> version;
  std::string version_source;  // "/proc/driver/nvidia/version", "NVML", "/usr/lib/.../libcuda.so.580.65.06"
  // The newest CUDA the driver supports (NVML's nvmlSystemGetCudaDriverVersion_v2), when known.
  std::optional<MajorMinor> cuda;
  std::vector<Gpu> gpus;
  std::string gpus_source;  // "NVML", "nvidia-smi", or empty
  std::vector<std::string> problems;
};

// Where detect_driver looks; the defaults are the real system's. Empty strings skip a source.
struct DriverProbe {
  std::string proc_version = "/proc/driver/nvidia/version";
  std::vector<std::string> libcuda_dirs = {
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64",
      "/usr/lib/wsl/lib"};
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string nvidia_smi = "nvidia-smi";  // looked up on $PATH unless it holds a '/'
};

DriverInfo detect_driver(const DriverProbe& probe = {});

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." -> 580.65.06.
std::optional<DriverVersion> parse_proc_driver_version(std::string_view text);
// "libcuda.so.580.65.06" (a file name, with or without directories) -> 580.65.06.
std::optional<DriverVersion> parse_libcuda_file_name(std::string_view name);
// Lines of `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader`:
// "NVIDIA H200, 9.0". Lines that do not parse are skipped and named in `problems`.
std::vector<Gpu> parse_nvidia_smi_gpus(std::string_view text, std::vector<std::string>* problems);

}  // namespace envdoctor::cuda
