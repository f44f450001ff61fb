// The CUDA side of an environment, gathered once: the GPUs and driver to judge against, every
// file's GPU code (fatbinary headers only, read in parallel), the CUDA libraries and runtimes
// with the major each belongs to, and who loads which (the load model's resolutions, not file
// names). Also the verdicts that `check` (checks/cuda/cuda_checks.h) and `envdoctor cuda`
// (queries/cuda_summary.h) both give, so that the two cannot disagree: how a file's code runs on a
// GPU, and whether a runtime runs on a driver.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checks/context.h"
#include "checks/load_checks.h"
#include "cuda/arch.h"
#include "cuda/driver.h"
#include "cuda/fatbin.h"
#include "cuda/tables.h"
#include "cuda/versions.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

// One file's GPU code.
struct GpuCode {
  const environment::ElfRecord* file = nullptr;
  cuda::FatbinInfo fatbins;
  std::vector<std::string> sass;  // "sm_80", "sm_90a": loadable cubins, by sm then variant
  std::vector<std::string> ptx;   // "compute_80"
  // One of NVIDIA's own libraries (its SONAME is in data/sonames.json): some keep kernels where
  // the fatbinary headers do not show them (cuFFT's .ldata, docs/cuda.md), so only a GPU older
  // than all of its code is reported.
  bool toolkit_library = false;
  int lowest_sm = 0;  // of its loadable SASS and PTX
};

// A library of a CUDA release, in the environment or reached from it (a system toolkit on
// LD_LIBRARY_PATH), and the CUDA major it belongs to.
struct CudaLibrary {
  std::string path;  // as the environment or the loader names it
  std::string soname;
  int major = 0;
  std::string major_source;  // "its SONAME", "nvidia-cudnn-cu12", "data/sonames.json", "its folder"
  const python::Distribution* owner = nullptr;
  std::string origin;  // the owner's name, "LD_LIBRARY_PATH" or "system"
};

// A CUDA runtime (libcudart) and its release.
struct CudaRuntime {
  std::string path;
  std::string soname;  // "libcudart.so.13"
  int major = 0;
  std::optional<cuda::MajorMinor> version;  // 13.0; nullopt when only the major is known
  // Where the release was read, in this order: "file libcudart.so.12.4.127" (the file the SONAME
  // resolves to), "/usr/local/cuda-13.0/version.json (cuda_cudart 13.0.96)" (the toolkit's),
  // "nvidia-cuda-runtime 13.0.96" (the wheel's), "its folder cuda-13.0" (NVIDIA's installer
  // names the toolkit's folder by its release); "" when none says.
  std::string version_source;
  const python::Distribution* owner = nullptr;
  std::string origin;
};

// A libcuda.so.1 from NVIDIA's forward-compatibility package (cuda-compat), found where the
// runtime's dlopen("libcuda.so.1") would find it before the system's: on LD_LIBRARY_PATH, or
// shipped inside the environment. Its file name carries the driver release it implements.
struct ForwardCompat {
  std::string path;  // the real file, libcuda.so.580.65.06
  cuda::DriverVersion version;
  std::string where;  // "LD_LIBRARY_PATH" or "the environment (PKG)"
};

// A CUDA runtime that files need and that the loader does not find (their NEEDED entry found
// nothing): the files cannot load, and `cuda` lists the runtime with them.
struct MissingRuntime {
  std::string soname;  // "libcudart.so.12"
  int major = 0;
  std::vector<std::string> needed_by;  // the files, by path
};

struct CudaInventory {
  std::vector<GpuCode> gpu_code;                 // files with loadable GPU code, in path order
  std::vector<CudaLibrary> libraries;            // by path
  std::vector<CudaRuntime> runtimes;             // by path
  std::vector<MissingRuntime> missing_runtimes;  // by SONAME
  std::optional<ForwardCompat> forward_compat;
  // The driver's libraries (data/driver_libraries.json) that the loader's ld.so.cache lists, by
  // SONAME, as the NVIDIA container toolkit finds them to mount (a name prefix matched in the
  // cache, libnvidia-container src/nvc_info.c): what this machine's (or this root's) driver
  // provides. nullopt for an image, whose cache says nothing of the node it will run on.
  std::optional<std::vector<std::string>> driver_libraries;
  // Canonical path -> canonical paths of the libraries its NEEDED entries resolved to, and the
  // reverse, from the load model's resolutions.
  std::map<std::string, std::set<std::string>> needs;
  std::map<std::string, std::set<std::string>> users;

  const CudaLibrary* library(const std::string& path) const;
  // The packages (or, for a file no package owns, its path) whose files load `path` directly.
  std::vector<std::string> user_names(const environment::Environment& env, const std::string& path) const;
};

// Reads every ELF file's fatbinaries (headers only, in parallel) and sorts the CUDA libraries
// of the environment and of the resolutions by major; the runtimes that `load_findings`
// (missing-library) say are not found are the missing ones. `opened`: the copies packages open by
// themselves at first use (checks/package_loads.h), which count as used by whoever opened them
// without joining anyone's load graph (an RTLD_LOCAL dlopen by path binds nothing between them).
CudaInventory index_cuda(const Context& ctx, const ResolutionMap& resolutions,
                         const std::vector<Finding>& load_findings, const ResolutionMap& opened = {});

// The driver the runtimes talk to: the kernel module's, raised by a newer forward-compatibility
// libcuda. nullopt when no driver is known.
std::optional<cuda::DriverVersion> effective_driver(const CudaInventory& inventory, const CudaTarget& target);

// The driver a runtime needs: for its release (full compatibility) when known, and the floor of
// minor-version compatibility of its major. `unknown`: the release (or major) is newer than
// data/cuda.json, so neither is known and nothing is judged (checks/cuda/beyond_table.h says so).
struct DriverRequirement {
  std::optional<cuda::DriverVersion> full;
  std::optional<cuda::DriverVersion> minor_floor;
  bool unknown = false;
};
DriverRequirement driver_requirement(const CudaRuntime& runtime, const cuda::CudaTables& tables);

// The newest CUDA release whose GA driver is at most `driver` ("12.4" for 550.54.14); nullopt for
// a driver newer than the tables (CudaTables::newest_cuda_for_driver).
std::optional<cuda::MajorMinor> newest_cuda_for_driver(const cuda::DriverVersion& driver,
                                                       const cuda::CudaTables& tables);

// How a runtime fares on a driver.
enum class DriverFit {
  kNoDriver,     // no driver known: not judged
  kBeyondTable,  // the runtime is newer than data/cuda.json: not judged (a note says so)
  kNotInTable,   // neither its release nor its major's floor is in the table: not judged
  kFull,         // the driver is new enough for the release
  kMinorCompat,  // only through CUDA minor-version compatibility
  // The release is not known (only the major): the driver runs it at least through minor-version
  // compatibility, and whether it runs it fully is not known.
  kReleaseUnknown,
  kTooOld,  // cuda-driver-too-old
};
struct RuntimeOnDriver {
  DriverRequirement need;
  DriverFit fit = DriverFit::kNoDriver;
  std::optional<cuda::DriverVersion> required;  // what the runtime needs at least (kTooOld)
};
RuntimeOnDriver runtime_on_driver(const CudaRuntime& runtime, const cuda::CudaTables& tables,
                                  const std::optional<cuda::DriverVersion>& driver);

// How one file's GPU code runs on a GPU of `sm`. NVIDIA's own libraries keep some kernels where
// the headers do not show them (cuFFT's .ldata, docs/cuda.md), so they are judged only on a GPU
// older than all of their code; on any other they run.
cuda::Coverage gpu_coverage(const GpuCode& code, int sm, const std::optional<cuda::DriverVersion>& driver,
                            const cuda::CudaTables& tables);

// The key under which the inventory files a path: its links resolved, inside the root under
// --root (never on this machine's tree).
std::string cuda_path_key(const environment::Environment& env, const std::string& path);

// The CUDA major of the library `soname` at `path`, owned by `owner`, and how that is known
// (`source`: "its SONAME", the owner's name, "data/sonames.json", "its folder"); 0 when it is no
// CUDA library (by data/sonames.json, or a runtime's SONAME) or its major cannot be told. `check`
// and `ps` both ask this. Without `knowledge` only a runtime's SONAME tells.
int cuda_major_of(const environment::Knowledge* knowledge, std::string_view soname, const python::Distribution* owner,
                  const std::string& path, std::string* source);

// "libcudart.so.12" -> 12, "libcudart.so.11.0" -> 11: the runtime's SONAME carries its major.
std::optional<int> cudart_major(std::string_view soname);

// A runtime release (13.5), or a major without a release (libcudart.so.14), newer than every
// release the tables know the driver of.
bool runtime_beyond_table(const CudaRuntime& runtime, const cuda::CudaTables& tables);

}  // namespace envdoctor::checks
