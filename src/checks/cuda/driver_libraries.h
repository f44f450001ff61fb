// The NVIDIA driver's own libraries in the load model.
//
// libcuda.so.1, libnvidia-ml.so.1, libnvidia-ptxjitcompiler.so.1 and the rest of
// data/driver_libraries.json (the NVIDIA container toolkit's list, src/nvc_info.c) come with the
// driver: installed on the host with the kernel module, and in a container mounted from the host
// by the NVIDIA container toolkit. No package ships them, so a missing one is no package's fault
// and no reinstall brings it. With a driver to check against (`--driver`, or one found on this
// machine) they are present for the model, at the driver's version: their missing-library
// findings are dropped (the load checks already leave out the symbols that would bind to them,
// checks/load_checks.cc) and one note says which driver provides them. Without a driver, the
// GPU libraries cannot load on this machine at all: one note says so, not an error per consumer.
//
// cuda-compat's libcuda.so.* found on the search path is the driver too, at its own version,
// with its own limits (checks/cuda/cuda_checks.h, forward compatibility).
#pragma once

#include <string>
#include <vector>

#include "checks/cuda/inventory.h"
#include "checks/finding.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

// Takes the findings of missing driver libraries out of `findings` (missing-library, and
// program-will-not-start for the same cause) and returns the note that replaces them; none when
// there were none.
std::vector<std::string> account_driver_libraries(const Context& ctx, std::vector<Finding>& findings);

}  // namespace envdoctor::checks
