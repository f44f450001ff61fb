// system-copy-stands-in: a library the environment's own package would provide is gone (the
// package uninstalled, or never installed where a requirement names it), and the loader finds a
// copy outside the environment instead, through ld.so.cache or a system directory. The import
// works here; in a container or on a node without that copy (or with another release of it) it
// fails. Found from the load model's resolutions: a copy outside every site directory and the
// prefix, of a library a known wheel ships (environment/knowledge.h), needed by a file of a
// package that requires that wheel or searches the directory where that wheel installs it.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "imports/load_graph.h"

namespace envdoctor::checks {

std::vector<Finding> check_system_copies(const Context& ctx, const imports::ResolutionMap& resolutions);

}  // namespace envdoctor::checks
