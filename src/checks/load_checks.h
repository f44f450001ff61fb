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

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "loader/process.h"

namespace envdoctor::checks {

// Who loaded which copy of a library, gathered while checking loads: soname -> resolved path
// -> the files whose NEEDED resolved there. duplicate-library reads it.
using ResolutionMap = std::map<std::string, std::map<std::string, std::set<std::string>>>;

// One NEEDED entry of one object as the load model resolved it, for `envdoctor why`.
struct Edge {
  std::string consumer;  // normalized path of the object with the NEEDED entry
  std::string needed;    // the DT_NEEDED string
  std::string resolved;  // normalized path it resolved to; "" when not found
  loader::Rule rule = loader::Rule::kNotFound;
  std::string source;  // the directory (or cache) that found it
  std::vector<loader::Attempt> attempts;
};

struct LoadCheckResult {
  std::vector<Finding> findings;
  ResolutionMap resolutions;
  std::vector<Edge> edges;  // sorted by consumer, then needed; each pair once
  size_t loads = 0;         // simulated dlopen/exec calls
};

// What one run of the load checks learnt per import context, so that a second run over a changed
// environment (a simulation) loads again only the contexts the change can reach. A context is
// reused only when it found nothing wrong (its hints cannot have gone stale), holds the same
// files, imports the same distributions, and no changed path lies in or below (up to the depth
// of glibc-hwcaps and legacy subdirectories) any directory its loads opened or searched.
struct LoadMemo {
  struct Context {
    std::vector<std::string> files;
    std::set<python::Distribution::Id> dists;  // the releases of the package and of what it requires
    std::set<std::string> dirs;                // every directory its loads looked in, as spelled and resolved
    bool clean = false;
    std::vector<Edge> edges;
    ResolutionMap resolutions;
    size_t loads = 0;
  };
  bool filled = false;
  std::map<std::string, Context> contexts;  // by the package's metadata directory ("" for no package)
  std::set<std::string> base_dirs;          // the interpreter's own loads
  // Set before the second run.
  std::set<std::string> changed_paths;
  std::set<std::string> changed_dists;  // PEP 503 names

  bool reaches(const std::set<std::string>& dirs) const;  // a changed path in or below one of dirs
  size_t reused = 0;                                      // contexts the last run did not load again
};

// `on_file(done, total)` is called as files are checked (for a progress line); may be empty.
using ProgressFn = std::function<void(size_t done, size_t total)>;
// `edges`: whether LoadCheckResult::edges is built (resolutions always are).
LoadCheckResult check_loads(const environment::Environment& env, const environment::Knowledge& knowledge,
                            const ProgressFn& on_file = {}, LoadMemo* memo = nullptr, bool edges = true);

}  // namespace envdoctor::checks
