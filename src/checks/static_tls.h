// static-tls-exhausted: libraries with initial-exec TLS, loaded by dlopen, that together need more
// of glibc's static TLS block than it keeps free after start-up (loader/static_tls.h).
//
// Every package of an environment can end up in one process, and the static TLS block is one per
// process, sized before the first import: what the extension modules and their libraries take
// from its surplus adds up across packages. The check models that process: the interpreter
// started (its own objects placed at start-up), then every package imported in the import
// model's order (imports/python_process.h): alphabetically by PEP 503 name, each after the
// packages it requires, each as `import` loads it (torch's preload, the modules __init__.py
// imports first, then the rest by path); modules no package owns come last. In each dlopen the new objects are
// relocated dependencies first (elf/dl-open.c walks l_initfini backwards), and each TLS block a relocation reaches is
// placed as _dl_try_allocate_static_tls places it.
//
// The order decides only *which* library meets the end of the room, never whether one does when
// all are imported: the finding names the one that fails in the modelled order and lists every
// library that takes static TLS, with the total and the room. The hint gives the
// glibc.rtld.optional_static_tls value that makes the whole sequence fit, found by replaying it.
//
// Cost: a first pass reads PT_TLS and DF_STATIC_TLS, already parsed, of every file the load
// checks resolved, and scans the relocation tables only of objects with PT_TLS or
// DF_STATIC_TLS. Only when an upper bound of what they need exceeds the room is the process
// modelled, import by import.
#pragma once

#include <vector>

#include "checks/finding.h"
#include "checks/load_checks.h"
#include "environment/environment.h"

namespace envdoctor::checks {

std::vector<Finding> check_static_tls(const Context& ctx, const ResolutionMap& resolutions);

}  // namespace envdoctor::checks
