// preload-ignored: a name of LD_PRELOAD or /etc/ld.so.preload that ld.so cannot map when it
// starts the environment's interpreter (loader/preload.h). ld.so says so on stderr and starts the
// process without it: whatever it was put there to interpose (an allocator, a shim, a library
// loaded early on purpose) is not there, and the imports go on. The load model has the preloads
// that do load before everything else, in every import context, as ld.so has them.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"

namespace envdoctor::checks {

std::vector<Finding> check_preloads(const Context& ctx);

}  // namespace envdoctor::checks
