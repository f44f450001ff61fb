// TransformerEngine loads cuDNN, NVRTC and cuRAND itself when `import transformer_engine` runs
// (data/runtime_loads.json, search "transformer_engine"), by a search of its own and not the
// loader's. From its 2.11 release on, transformer_engine/common/__init__.py tries, for each
// library, the directories that CUDNN_HOME, CUDNN_PATH, CUDA_HOME, CUDA_PATH name and
// /usr/local/cuda, each globbed recursively for libNAME.so* (stubs left out, the names sorted
// in reverse, the first taken), then a dlopen of the unversioned libNAME.so (the one step that
// LD_LIBRARY_PATH and ld.so.cache take part in), then the NVIDIA wheels under
// site-packages/nvidia; each copy is opened with RTLD_GLOBAL. Where neither NVRTC nor cuRAND
// came from the system, cuBLAS, cudart and cuDNN must come from the wheels. A miss raises
// (`RuntimeError: cudnn shared object not found.`). Releases 2.4 to 2.10 give each library a
// function of its own: the variables' directories, the wheel folder, then the lines of
// `ldconfig -p` (through grep in a shell, whose status 1 raises CalledProcessError where ldconfig
// is not on PATH or the cache names no copy, before the dlopen that LD_LIBRARY_PATH takes part
// in: TransformerEngine#2373), then the dlopen. In either shape a copy that does not load raises
// its dlerror as OSError, and a toolkit's copy found first is loaded with RTLD_GLOBAL ahead of a
// wheel's: from then on it serves its SONAME to the whole process, torch's libraries included
// (TransformerEngine#2381).
//
// The search is read from the installed file itself (checks/transformer_engine_rule.h); a file
// of another shape gets no verdict.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

std::vector<Finding> check_transformer_engine(const Context& ctx, const environment::RuntimeLoad& row);

}  // namespace envdoctor::checks
