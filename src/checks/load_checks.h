// Every load failure of every ELF file in the environment, in Python's import context.
//
// The process is the import model's (imports/python_process.h): the interpreter is the main
// program, so an extension module takes its Py* symbols from it; a package's requirements are
// imported before it, torch's preload is done, and the modules its __init__.py imports load
// first, each checked in the context of those before it. flash-attn's `NEEDED libc10.so` with
// no RPATH resolves to torch's copy, matched by SONAME, and its undefined symbols are bound
// against it.
//
// Each file is then dlopen'd (RTLD_NOW | RTLD_LOCAL, as Python does) in its package's context;
// programs are loaded as main programs of their own. Every failure becomes a finding on the
// object whose need failed, in the loader's words, with the fix advice gives.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "imports/load_graph.h"
#include "imports/load_memo.h"
#include "loader/process.h"

namespace envdoctor::checks {

// The load graph and the memo are the import model's (imports/load_graph.h, load_memo.h); the
// checks read them by these names.
using imports::Edge;
using imports::LoadMemo;
using imports::ResolutionMap;

struct LoadCheckResult {
  std::vector<Finding> findings;
  ResolutionMap resolutions;
  std::vector<Edge> edges;  // sorted by consumer, then needed; each pair once
  size_t loads = 0;         // simulated dlopen/exec calls
  // The process `import P` left, for each package P with rules of its own (data/package_loads.json)
  // whose context was imported (not reused from a memo): its first use and the libraries it loads
  // that open others run there next (checks/package_loads.h), without importing it again.
  std::map<const python::Distribution*, loader::Process> processes;
};

// Reads ctx.settings' on_file (progress), memo (reuse across a simulated change) and edges
// (whether LoadCheckResult::edges is built; resolutions always are).
LoadCheckResult check_loads(const Context& ctx);

}  // namespace envdoctor::checks
