// The GPUs and driver that the CUDA checks judge against: the node the session read
// (environment/node.h), given to the checks in their settings.
#pragma once

#include "environment/node.h"

namespace envdoctor::checks {

using CudaTarget = environment::Node;

}  // namespace envdoctor::checks
