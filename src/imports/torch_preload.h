// torch/__init__.py's `_load_global_deps()` on Linux, release by release: what `import torch`
// dlopens before its extension module, so that a CUDA wheel's copy of a library is the one
// loaded. Read from torch/__init__.py and the pull requests that changed it (docs/torch.md has the
// table with a source per row); never executed.
//
// In every release: lib/libtorch_global_deps.so is opened first with RTLD_GLOBAL. Each library
// preloaded is opened with plain `ctypes.CDLL` (RTLD_LOCAL), the first match of its glob pattern
// along sys.path. Two moments preload:
// - after that open fails with an OSError whose text names one of the libraries (the recovery):
//   every library of the list, in order, each required (the first one not found raises
//   "ValueError: PATTERN not found in the system path [...]" and `import torch` fails), then
//   libtorch_global_deps.so again with RTLD_GLOBAL;
// - after it succeeds (the opportunistic preload, from 2.6): when /proc/self/maps shows libcudart,
//   the libraries of `opportunistic`, until the first one not found (any error is swallowed),
//   or each on its own from 2.13.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "python/version.h"

namespace envdoctor::imports {

struct TorchPreload {
  struct Library {
    const char* folder;   // nvidia/FOLDER/lib
    const char* pattern;  // glob(3) pattern of the file name
    bool required = true;
  };
  // Where each sys.path entry P is searched for a library, in this order.
  enum class Search {
    kNvidia,              // P/nvidia/FOLDER/lib, only when P/nvidia exists
    kNvidiaThenFolder,    // and P/FOLDER/lib, also only when P/nvidia exists (2.6)
    kNvidiaOrFolder,      // P/nvidia/FOLDER/lib, then P/FOLDER/lib (2.7: _get_cuda_dep_paths)
    kNvidiaCudaOrFolder,  // P/nvidia/FOLDER/lib, P/nvidia/cuMAJOR/lib, P/FOLDER/lib (2.9)
  };
  // When the opportunistic preload runs after libtorch_global_deps.so loaded.
  enum class When {
    kNever,
    kWheelCudart,  // a mapped path holds "nvidia/cuda_runtime/lib/libcudart.so" (2.6)
    kAnyCudart,    // a mapped path holds "libcudart.so" (2.10: any copy, a system toolkit's too)
  };
  const char* since;  // the first release with this behaviour
  std::vector<Library> libraries;
  Search search = Search::kNvidia;
  When when = When::kNever;
  std::vector<Library> opportunistic;  // empty with kNever
  bool each_on_its_own = false;        // the opportunistic preload skips a missing library (2.13)
};

// Where the recovery stopped: the first required library of the list that no sys.path entry
// holds, at which torch raises "ValueError: PATTERN not found in the system path [...]" and
// `import torch` fails; empty when it did not stop.
struct TorchPreloadStop {
  std::string global_deps;  // torch's lib/libtorch_global_deps.so, whose failure started the recovery
  std::string folder;       // nvidia/FOLDER/lib
  std::string pattern;      // "libnvToolsExt.so.*[0-9]"
  std::optional<int> cuda;  // the CUDA major torch was built for, when torch/version.py says
};

// The behaviour of the torch release `version` (its public part; a local label such as +cu128
// is ignored). nullopt for a version that does not parse.
std::optional<TorchPreload> torch_preload_for(const std::string& version);

// The CUDA major torch was built for, from torch/version.py's `cuda = '12.8'` (None for a CPU
// build): nullopt when the text names none.
std::optional<int> torch_cuda_major(const std::string& version_py);

// The OSError text names one of the libraries: the part of its pattern before the first '.'
// ("libcublas" of "libcublas.so.*[0-9]") is in the text (torch's is_cuda_lib_err).
bool names_a_preloaded_library(const TorchPreload& preload, const std::string& error_text);

}  // namespace envdoctor::imports
