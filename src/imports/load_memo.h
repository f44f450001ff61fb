// What one run of the load checks learnt per import context, so that a second run over a changed
// environment (a simulation) loads again only the contexts the change can reach. A context is
// reused only when it found nothing wrong (its hints cannot have gone stale), holds the same
// files, imports the same distributions, and no changed path lies in or below (up to the depth
// of glibc-hwcaps and legacy subdirectories) any directory its loads opened or searched.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "imports/load_graph.h"
#include "loader/process.h"
#include "python/distribution.h"

namespace envdoctor::imports {

struct LoadMemo {
  struct Context {
    std::vector<std::string> files;
    std::set<python::Distribution::Id> dists;  // the releases of the package and of what it requires
    std::set<std::string> dirs;                // every directory its loads looked in, as spelled and resolved
    bool clean = false;
    NotedLoads noted;
    size_t loads = 0;
  };
  bool filled = false;
  std::map<std::string, Context> contexts;  // by the package's metadata directory ("" for no package)
  std::set<std::string> base_dirs;          // the interpreter's own loads
  // Set before the second run.
  std::set<std::string> changed_paths;
  std::set<std::string> changed_dists;  // PEP 503 names

  bool reaches(const std::set<std::string>& dirs) const;  // a changed path in or below one of dirs
  // Whether `before` (this memo's context under the same key) can stand for `now`.
  bool still_holds(const Context& before, const Context& now) const;
  // Keeps what a run learnt: each context's directories, also under their resolved names in the
  // environment's root, because a change may be spelled either way.
  void remember(const environment::Environment& env, std::map<std::string, Context> learnt, std::set<std::string> base,
                size_t contexts_reused);
  size_t reused = 0;  // contexts the last run did not load again
};

// Every directory a process's loads opened a file in or searched, as spelled and resolved.
void footprint(const loader::Process& p, std::set<std::string>& dirs);

}  // namespace envdoctor::imports
