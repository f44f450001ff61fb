// duplicate-library: several copies of one SONAME in the environment (or several copies
// actually loaded by different consumers), and which copy wins for whom.
#pragma once

#include <vector>

#include "checks/environment.h"
#include "checks/finding.h"
#include "checks/load_checks.h"

namespace envdoctor::checks {

std::vector<Finding> check_duplicate_libraries(const Environment& env, const ResolutionMap& resolutions);

}  // namespace envdoctor::checks
