// What packages load by themselves after their import (data/package_loads.json): at first use and
// first compile, and what a library that opens others by name opens when it is called (cuDNN's
// sub-libraries, NVRTC's builtins). Each runs, through the one import model, in a process of the
// environment's interpreter that has imported the package (its requirements first, its own loads
// at import included); an opener is judged in the process of each package with rules of its own
// that loads it (what that package preloaded in place: torch and cuda-pathfinder preload NVRTC's
// builtins), and from a bare interpreter where another loads it; the findings are
// package_load_findings.h's.
// The loads a package makes at import run inside the load checks' import of it (load_checks.h).
#pragma once

#include <map>
#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "imports/load_graph.h"
#include "loader/process.h"

namespace envdoctor::checks {

struct PackageLoadResult {
  std::vector<Finding> findings;
  // The copies the rules of later moments and the openers opened: soname -> path -> the file each
  // rule is about (the opener, or the package's file), as the load graph's resolutions say who
  // loaded which copy.
  imports::ResolutionMap opened;
};

// `resolutions`: the load checks' (who loads which copy), which say whether a package without rules
// of its own loads an opener.
// `imported` (may be null): the load checks' processes of `import P` (LoadCheckResult::processes),
// taken where there is one instead of importing P again.
using ImportProcesses = std::map<const python::Distribution*, loader::Process>;
PackageLoadResult check_package_loads(const Context& ctx, const imports::ResolutionMap& resolutions,
                                      ImportProcesses* imported = nullptr);

}  // namespace envdoctor::checks
