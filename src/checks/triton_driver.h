// Triton finds the NVIDIA driver its own way (data/runtime_loads.json, search "triton"): at its
// first compile with an empty cache (~/.triton/cache), `libcuda_dirs()` takes the directories of
// the `ldconfig -p` lines that name libcuda (the ld.so.cache, never the loader's default
// directories), falls back to LD_LIBRARY_PATH only where the cache names none (Triton 3), and
// asserts that one of them holds the file it links its launcher against (`libcuda.so.1` in Triton 3,
// the unversioned `libcuda.so` before); TRITON_LIBCUDA_PATH skips the search. So a driver that the
// loader finds, and torch uses, can still fail every Triton kernel: a stale cache that names a
// copy since removed, a driver in a default directory the cache does not list, or only the
// versioned file where an older Triton wants the link name (triton#3053).
//
// The rule is read from the installed Triton's own source (the file that defines libcuda_dirs),
// so that the names, the fallback and the words are those of the version installed.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

std::vector<Finding> check_triton_driver(const Context& ctx, const environment::RuntimeLoad& row);

}  // namespace envdoctor::checks
