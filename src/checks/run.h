// The checks stage as a whole: every family of checks over one environment, then the fix pass
// (advice makes each finding's fix from what its check asked for, advice/fix_request.h), then the
// causes linked, and the findings sorted and de-duplicated. `check` runs it once, or twice around
// a simulated change.
#pragma once

#include <string>
#include <vector>

#include "checks/context.h"
#include "checks/cuda/cuda_checks.h"
#include "checks/finding.h"
#include "checks/load_checks.h"

namespace envdoctor::checks {

struct CheckRun {
  std::vector<Finding> findings;
  std::vector<std::string> notes;    // what was not checked, and why
  bool needs_absent_driver = false;  // files need the NVIDIA driver's libraries, and there is no driver
  // What the verdicts were drawn from, for a snapshot: every NEEDED entry as the load model
  // resolved it, and the CUDA facts.
  std::vector<Edge> edges;
  CudaInventory cuda;
};

CheckRun run_checks(const Context& ctx);

}  // namespace envdoctor::checks
