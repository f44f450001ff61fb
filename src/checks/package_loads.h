// What packages load by themselves after their import (data/package_loads.json): at first use and
// first compile, and what a library that opens others by name opens when it is called (cuDNN's
// sub-libraries, NVRTC's builtins). Each runs, through the one import model, in a process of the
// environment's interpreter that has imported the package (its requirements first, its own loads
// at import included), or loaded the opener; the findings are package_load_findings.h's.
// The loads a package makes at import run inside the load checks' import of it (load_checks.h).
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"

namespace envdoctor::checks {

std::vector<Finding> check_package_loads(const Context& ctx);

}  // namespace envdoctor::checks
