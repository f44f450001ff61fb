// Where the CUDA knowledge tables end. data/cuda.json holds what NVIDIA has published up to the
// day it was written; a CUDA runtime, a PTX ISA, a driver or a GPU newer than that is not judged
// by stretching the newest row over it. Each gets a note that says what is unknown and that the
// fix is a newer envdoctor, and none of them changes the exit status.
//
// And the other end: a CUDA major that no longer supports a GPU (CUDA 13 and anything older
// than Turing, 7.5) is an error at its runtime, since the runtime has no device code whose
// fatbinary could show it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/cuda/inventory.h"
#include "checks/finding.h"
#include "cuda/tables.h"
#include "environment/environment.h"

namespace envdoctor::checks {

// One note per runtime, driver and GPU beyond the tables, and one for the files whose PTX is of
// an ISA whose driver the tables do not give, where that PTX is what would run:
// "libcudart.so.13 13.5 (file libcudart.so.13.5.37) is newer than this envdoctor's CUDA table
// (13.4): driver requirement unknown; fix: update envdoctor".
std::vector<std::string> cuda_beyond_table_notes(const CudaInventory& inventory, const cuda::CudaTables& tables,
                                                 const CudaTarget& target,
                                                 const std::optional<cuda::DriverVersion>& driver);

// gpu-arch-unsupported at each runtime of a CUDA major that does not support a target GPU
// (data/cuda.json "minimum_architecture"); without a runtime, at the first library of that major.
std::vector<Finding> check_cuda_minimum_gpu(const environment::Environment& env, const CudaInventory& inventory,
                                            const cuda::CudaTables& tables, const CudaTarget& target);

}  // namespace envdoctor::checks
