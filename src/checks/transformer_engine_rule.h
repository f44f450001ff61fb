// What the installed transformer_engine/common/__init__.py does at import (checks/transformer_engine.h),
// read from its text and never run. Its releases have had two shapes:
//
// - 2.11 and later: one search for every library. _load_cuda_library_from_system globs the
//   places of a `paths` tuple, then dlopens the unversioned name; _load_cuda_library_from_python
//   globs the wheels' folders under site-packages/nvidia; where neither NVRTC nor cuRAND came from
//   the system, cuBLAS, cudart and cuDNN are then required from the wheels.
// - 2.4 to 2.10: a function of its own for each library (_load_cudnn, _load_nvrtc, _load_curand),
//   each a sequence of steps: a recursive glob below a variable's value (CUDNN_HOME or CUDNN_PATH;
//   CUDA_HOME, CUDA_PATH or /usr/local/cuda), the library's wheel folder
//   (_load_nvidia_cuda_library), the lines of `ldconfig -p` (through `| grep` in a shell, where
//   grep finding nothing, or ldconfig missing from PATH, raises CalledProcessError:
//   TransformerEngine#2373), and last an uncaught dlopen of the unversioned name; then cuBLAS and
//   cudart from their wheel folders where they are there.
//
// Each shape is recognised statement by statement (comments, docstrings and the line breaks inside
// brackets aside), to the letter but for the library's name and the variables' names; a file with
// any other statement in these functions gets no rule, since no verdict on it could be exact.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::checks {

// Names keep the placeholders {lib} (the library: "cudnn"), {LIB} (it in upper case) and {ext}
// (".so"), which each step puts in.
struct TeRule {
  enum class Shape { kShared, kPerLibrary };
  Shape shape = Shape::kShared;
  std::string file;

  // kShared. _load_cuda_library_from_system's places, in order: a variable's value, or a path.
  struct Place {
    std::string variable;  // "CUDA_HOME", "{LIB}_HOME"; empty for a path
    std::string path;
  };
  std::vector<Place> places;
  // _load_cuda_library_from_python's folders under site-packages/nvidia, in order: each globbed
  // where its condition holds (a directory that must exist; none for an unconditional step).
  struct WheelStep {
    std::string isdir, glob;
  };
  std::vector<WheelStep> wheels;
  std::string not_found;         // _load_cuda_library's RuntimeError
  std::string strict_not_found;  // _load_cuda_library_from_python's, with strict=True
  // The libraries _load_cuda_library loads, in order, each with the variable that keeps whether
  // it came from the system ("" when the flag is dropped).
  std::vector<std::pair<std::string, std::string>> loads;
  std::vector<std::string> no_toolkit_when;  // the flags that, all false, make the strict loads run
  std::vector<std::string> strict;           // the libraries then required from the wheels

  // kPerLibrary. One step of a library's own function, tried in order until one returns.
  struct Step {
    enum class Kind {
      kHomeGlob,  // home = os.environ.get(A) or ... [or "fallback"]; [if home:] glob below it
      kWheel,     // _load_nvidia_cuda_library(folder)
      kLdconfig,  // the lines of `ldconfig -p`, the first that holds every `want` taken
      kDlopen,    // ctypes.CDLL(name): uncaught, the function's last word
    };
    Kind kind = Kind::kDlopen;
    std::vector<std::string> variables;  // kHomeGlob, in the order `or` tries them
    std::optional<std::string> fallback;
    bool guarded = false;             // `if home:` skips the glob where the value is false to Python
    std::string pattern;              // kHomeGlob: the name globbed below home ("libcudnn.so*"); kDlopen: the name
    std::vector<std::string> drop;    // paths (kHomeGlob) or lines (kLdconfig) holding one are left out
    std::string folder;               // kWheel: the folder under site-packages/nvidia ("cuda_nvrtc")
    std::optional<std::string> grep;  // kLdconfig: the shell pipeline's grep pattern; none for ["ldconfig", "-p"]
    std::string command;              // kLdconfig: the command as CalledProcessError quotes it
    std::vector<std::string> want;    // kLdconfig
  };
  // A library the module loads, in order: its own function's steps, or one kWheel step for a
  // bare _load_nvidia_cuda_library call (cuBLAS, cudart), which may find nothing.
  struct Loader {
    std::string lib;  // "cudnn"; the folder for a bare wheel load
    std::vector<Step> steps;
  };
  std::vector<Loader> loaders;
  std::string wheel_glob;  // _load_nvidia_cuda_library's glob below site-packages/nvidia, {lib} the folder
};

// The name with {lib}, {LIB} and {ext} put in.
std::string te_for_library(const std::string& name, const std::string& lib);

// The file's rule, in either shape; nullopt for a file of any other.
std::optional<TeRule> read_te_rule(const std::string& file, std::string_view text);

}  // namespace envdoctor::checks
