// Which GPU code runs on which GPU: the compatibility rules of the CUDA Programming Guide
// ("Binary Compatibility", "PTX Compatibility", "Feature Availability"), applied to the entries
// a fatbinary carries.
//
// SASS (a cubin) for compute capability X.y runs on X.z for every z >= y, never across majors.
// An arch-specific `a` cubin (sm_90a) runs on exactly X.y. A family-specific `f` cubin (sm_100f,
// CUDA 12.9+) runs on the compute capabilities NVIDIA's family table lists for it (data/cuda.json
// "families": compute_100f on 10.0, 10.3 and 10.7; compute_120f on 12.0 and 12.1); a family the
// table lacks runs on its own GPU only, as far as anything here can tell.
// PTX for compute_XY is JIT-compiled by the driver for any GPU of capability >= X.Y, provided the
// driver understands the PTX ISA version (the driver branch of each ISA is in the PTX table;
// minor-version compatibility does not extend to PTX). `a` PTX compiles only for that exact
// GPU, `f` PTX only within the family.
//
// A CUDA sm number is 10 * major + minor (sm_121 is 12.1), as nvcc and the fatbin headers write
// it. Numbers are compared under the current numbering: Thor's sm_101 of CUDA <= 12.9 is sm_110
// (data/cuda.json "renamed"), so an sm_101 cubin is code for an sm_110 GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/fatbin.h"
#include "cuda/tables.h"
#include "cuda/versions.h"

namespace envdoctor::cuda {

// Whether a cubin built for `sm` (with `variant` 0, 'a' or 'f') runs on a GPU of `gpu_sm`. On the
// Tegra GPUs (is_tegra) a cubin runs only on exactly its own architecture.
bool sass_runs_on(const CudaTables& tables, int sm, char variant, int gpu_sm);
bool is_tegra(int sm);
// Whether PTX for `sm`/`variant` can be JIT-compiled for a GPU of `gpu_sm` (the driver aside).
bool ptx_compiles_for(const CudaTables& tables, int sm, char variant, int gpu_sm);

// "9.0" or "12.1" (nvidia-smi's compute_cap) -> 90 / 121; nullopt on anything else.
std::optional<int> parse_compute_capability(std::string_view cc);
// 90 -> "9.0".
std::string compute_capability_name(int sm);

struct Coverage {
  enum class Kind {
    kSass,          // a cubin runs on the GPU as it is
    kPtxJit,        // only PTX fits: the driver JIT-compiles it on first use
    kUnsupported,   // nothing runs: "no kernel image is available for execution on the device"
    kNoDeviceCode,  // the file carries no loadable GPU code at all
    kUnknown        // the GPU is newer than data/cuda.json's architectures: not judged
  };
  Kind kind = Kind::kNoDeviceCode;
  // The entries that decided: the cubins that run (kSass), the PTX that JITs (kPtxJit), or for
  // kUnsupported the PTX that would fit the GPU but not the driver (empty when nothing fits).
  std::vector<FatbinEntry> deciding;
  // kSass/kPtxJit resting only on entries whose `a` variant could not be ruled out (compressed,
  // unflagged; see FatbinEntry::variant_known) and that would not run if they were `a` builds.
  bool variant_uncertain = false;
  // PTX deciding entries whose ISA is newer than the table: the driver check was not possible.
  bool ptx_isa_unknown = false;
  // Registered modules (containers of .nv_fatbin) and how many of them have nothing that runs:
  // their kernels fail at launch even when the library's verdict is kSass.
  u32 modules = 0;
  u32 modules_without_code = 0;
  // One line for humans: "SASS sm_80 runs on 8.6", "no SASS for 8.6; PTX compute_90 needs 9.0+".
  std::string reason;
};

// The verdict for a library's fatbinaries on a GPU of capability `gpu_sm`, with the driver when
// known (unknown: PTX is assumed to JIT). Relocatable entries (__nv_relfatbin) are inputs to a
// device link and never loaded, so they do not count. A GPU beyond the architecture table is
// kUnknown: the rules are not stretched over an architecture NVIDIA has not described.
Coverage classify(const FatbinInfo& info, int gpu_sm, std::optional<DriverVersion> driver, const CudaTables& tables);

// "sass", "ptx-jit", "unsupported", "none", "unknown"
const char* coverage_kind_name(Coverage::Kind kind);

// "sm_86", "sm_90a", "compute_90", "8.6", "86", "100" -> the GPU's sm number (86, 90, 90, 86, 86,
// 100). An `a`/`f` suffix names code, not a GPU, and is dropped. nullopt on anything else.
std::optional<int> parse_gpu_arch(std::string_view text);

// Whether `sm` can name a GPU: one of the table's architectures (or an old name of one), one
// of the compute capabilities NVIDIA shipped before the table's oldest row (3.0 ... 7.2, CUDA
// Programming Guide, "Compute Capabilities"), or a GPU newer than the table by at most two
// major versions (judged "unknown", not refused). Otherwise false with `why` set ("compute
// capability 99.9 is beyond any GPU: the newest this envdoctor knows is 12.1").
bool gpu_arch_possible(const CudaTables& tables, int sm, std::string* why);

}  // namespace envdoctor::cuda
