// Libraries opened at run time by name (data/runtime_loads.json): cuDNN 9's shim opens its
// sub-libraries at first use, NVRTC the builtins of its own version when it compiles. No NEEDED
// entry names them, so the load checks never look for them, and the failure comes at first use,
// in the opener's words ("Invalid handle. Cannot load symbol cudnnGetVersion", "Unable to load any of
// {libcudnn_engines_precompiled.so.9.4.0, ...}.").
//
// Each opener found in the environment is loaded into a process of the environment's interpreter,
// and each name it opens is resolved as glibc's dlopen called from the opener does (elf/dl-open.c:
// the caller's DT_RPATH chain without DT_RUNPATH, LD_LIBRARY_PATH, the caller's DT_RUNPATH,
// ld.so.cache, the default directories): runtime-library-missing when none of the names loads (an
// error when the package cannot work without it), or a warning when the copy found is not the
// opener's own package's (a cuDNN wheel that lacks a sub-library falls through to a system cuDNN).
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

std::vector<Finding> check_runtime_loads(const Context& ctx);

}  // namespace envdoctor::checks
