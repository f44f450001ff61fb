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
#include "imports/load_graph.h"

namespace envdoctor::checks {

struct PackageLoadResult {
  std::vector<Finding> findings;
  // The copies the rules of later moments and the openers opened: soname -> path -> the file each
  // rule is about (the opener, or the package's file), as the load graph's resolutions say who
  // loaded which copy.
  imports::ResolutionMap opened;
};

PackageLoadResult check_package_loads(const Context& ctx);

}  // namespace envdoctor::checks
