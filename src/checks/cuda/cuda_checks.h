// The CUDA checks: will the GPU code of this environment run on these GPUs, will its CUDA
// runtimes run on this driver, and does one environment (or one process) mix CUDA majors.
//
// They read three things the other stages gathered: the ELF index (every file's fatbinaries,
// read from their headers only, in parallel), the load model's resolutions (who loads which
// copy of a library, so "which packages use which runtime" is what the loader would do, not
// what file names suggest), and the knowledge tables (data/sonames.json: which CUDA major a
// SONAME belongs to; data/cuda.json: which driver each CUDA release needs). The GPUs and the
// driver come from the command line or from this machine (cuda/driver.h); without them the
// checks that need them are skipped, with a note saying so.
//
// checks/cuda/inventory.h gathers the facts once (index_cuda) and holds the verdicts that `check`
// and `envdoctor cuda` share; check_cuda turns them into findings.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checks/cuda/inventory.h"
#include "checks/finding.h"
#include "checks/load_checks.h"
#include "cuda/driver.h"
#include "cuda/fatbin.h"
#include "cuda/tables.h"
#include "cuda/versions.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

struct CudaCheckResult {
  std::vector<Finding> findings;
  std::vector<std::string> notes;  // what was not checked and why; what works only by a rule
};

// gpu-arch-unsupported, ptx-jit-only, cuda-driver-too-old and cuda-major-mix. `driver_absence_noted`:
// a note already says that there is no driver (checks/cuda/driver_libraries.h), so none repeats it.
CudaCheckResult check_cuda(const Context& ctx, const CudaInventory& inventory, bool driver_absence_noted = false);

// cuda-major-mix in a running process (`ps`): CUDA libraries of several majors mapped in process
// `pid` together, each with the major cuda_major_of gives. An error: two CUDA runtimes are in one
// process now, not only reachable. nullopt for fewer than two majors.
std::optional<Finding> cuda_majors_loaded(const std::vector<CudaLibrary>& libraries, int pid);

}  // namespace envdoctor::checks
