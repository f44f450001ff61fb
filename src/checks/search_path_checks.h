// searches-current-directory: an ELF file of the environment whose own search list (DT_RUNPATH,
// else DT_RPATH) has an empty element, `$ORIGIN:` or `:/opt/lib`. glibc keeps such an element as
// "" (elf/dl-load.c, fillin_rpath: `strsep' can pass an empty string, and it is kept), and
// open_path then opens "" + "glibc-hwcaps/x86-64-v3/" + name, ..., "" + name: relative paths, so
// the loader looks in the current working directory of the process, whatever it is, before the
// directories that follow and before ld.so.cache and the system directories. The load model
// searches there too (loader/search.cc); this check says that it happens.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/environment.h"

namespace envdoctor::checks {

std::vector<Finding> check_search_paths(const Context& ctx);

}  // namespace envdoctor::checks
