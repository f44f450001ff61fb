// --image: whether the NVIDIA container toolkit would start the image on the node at all. Its
// requirement check (image/requirements.h) is run with the node's driver and GPUs (--driver,
// --gpu, --node) and the CUDA version that driver reports (the CUDA tables); a refusal is
// container-requirement-unmet, in nvidia-container-cli's own words. A condition this tool cannot
// decide (a driver newer than its tables) is a note, never a guess.
#pragma once

#include <string>
#include <vector>

#include "checks/cuda/inventory.h"
#include "checks/finding.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "image/requirements.h"

namespace envdoctor::checks {

struct ContainerCheckResult {
  std::vector<Finding> findings;
  std::vector<std::string> notes;
};

// Nothing for an environment that is not an image's, or without a driver to check against.
ContainerCheckResult check_container_requirements(const Context& ctx);

// The node as the toolkit sees it: the driver's version and CUDA version, the GPUs' compute
// capabilities.
image::NodeFacts node_facts(const CudaTarget& target, const cuda::CudaTables& tables);

}  // namespace envdoctor::checks
