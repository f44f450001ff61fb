// import-order-conflict: one process, two packages, two copies of one SONAME.
//
// Each package is checked in its own import context (load_checks.h), where its extension modules
// find their own copy of a library. A real program imports several packages into one process,
// and the loader matches a NEEDED entry against every object already loaded by SONAME first
// (glibc elf/dl-load.c: _dl_map_object, the _dl_name_match_p loop over the namespace), whatever
// RTLD_LOCAL said: the first package's copy then serves the second, whose version needs
// (elf/dl-version.c) and symbol references (elf/dl-lookup.c) must hold against it.
//
// So for every SONAME that two packages resolve to different files, and only for those (the
// check must not become quadratic in packages), each package is imported after the other into
// one simulated process: `import A, B` and `import B, A`. A failure that B alone does not have
// is a conflict: a warning when the other order works, an error when neither does. Copies that
// serve each other both ways are left to duplicate-library, as advice.
#pragma once

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "checks/load_checks.h"
#include "environment/environment.h"

namespace envdoctor::checks {

// The pairing of packages into one process, shared by import-order-conflict (packages grouped by
// the copy of a SONAME they load) and cuda-major-mix (by the CUDA major they load): every
// package of one group with every package of another, each unordered pair once per call, and
// at most kPackagesPerGroup packages of a group (the pairs grow with the square of it, and a
// group that three packages share is judged by any of them). `visit(a, group_a, b, group_b)`.
constexpr size_t kPackagesPerGroup = 3;

template <typename Group, typename Visit>
void for_each_pair_across_groups(const std::map<Group, std::vector<const python::Distribution*>>& groups,
                                 Visit&& visit) {
  for (auto i = groups.begin(); i != groups.end(); ++i)
    for (auto j = std::next(i); j != groups.end(); ++j)
      for (size_t x = 0; x < std::min(i->second.size(), kPackagesPerGroup); ++x)
        for (size_t y = 0; y < std::min(j->second.size(), kPackagesPerGroup); ++y)
          if (i->second[x] != j->second[y]) visit(i->second[x], i->first, j->second[y], j->first);
}

struct ImportOrderResult {
  std::vector<Finding> findings;
  std::set<std::string> conflicting;  // SONAMEs some import order breaks
  std::set<std::string> compatible;   // SONAMEs whose copies were paired and serve each other both ways
  size_t pairs = 0;                   // package pairs imported in both orders
};

// The name `import` spells a package by: the top-level directory of its first extension module,
// relative to the site directory it is installed in; else its distribution name.
std::string import_name(const environment::Environment& env, const python::Distribution& dist);

ImportOrderResult check_import_order(const Context& ctx, const ResolutionMap& resolutions);

}  // namespace envdoctor::checks
