// NVIDIA fatbinaries: which GPU code a shared library carries, read from headers only.
//
// nvcc embeds device code in three ELF sections (fatbinary_section.h in the CUDA toolkit):
// `.nv_fatbin` holds the fatbinaries the CUDA runtime registers, `__nv_relfatbin` the
// relocatable images kept for a later device link (-rdc), and `.nvFatBinSegment` the
// `__fatBinC_Wrapper_t` records that point into `.nv_fatbin` (one per registered module; not
// needed here, since the containers sit back to back in `.nv_fatbin`).
//
// A section holds one or more containers, each a 16-byte `fatBinaryHeader` (magic 0xBA55ED50,
// version 1, headerSize, fatSize) followed by fatSize bytes of entries. Each entry is a header
// of at least 64 bytes (its own size at offset 4, so newer toolkits can append fields) and then
// its payload: a cubin (SASS, an ELF with e_machine EM_CUDA) or PTX text, either possibly
// zstd-compressed. The layout is NVIDIA's and undocumented; docs/cuda.md records how each field
// was established (nvcc 13.0 output, cuobjdump, public reverse-engineering notes).
//
// Only headers are read, plus at most the first bytes of an uncompressed payload when the header
// does not say whether the code is an arch-specific (`sm_90a`) build: a cubin's e_flags under the
// pre-CUDA-13 ELF ABI, a PTX module's `.target` line. A compressed payload is never inflated; an
// entry whose variant could not be established says so (variant_known = false).
//
// Every offset and size is checked against the section before use; a malformed container is a
// problem string, never a crash, and parsing continues with the next container when its extent
// is still known.
#pragma once

#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "elf/mapped_file.h"

namespace envdoctor::cuda {

struct FatbinEntry {
  enum class Kind { kSass, kPtx, kOther };
  Kind kind = Kind::kOther;
  u16 raw_kind = 0;           // 1 PTX, 2 ELF (cubin), 8 NVVM IR, ...
  int sm = 0;                 // 90 for sm_90 / compute_90
  char variant = 0;           // 0, 'a' (arch-specific: that exact GPU), 'f' (family-specific)
  bool variant_known = true;  // false: no header flag and the payload is compressed
  int ptx_isa_major = 0;      // PTX only: the `.version` of the module
  int ptx_isa_minor = 0;
  bool compressed = false;
  bool relocatable = false;  // from __nv_relfatbin: an input to a device link, never loaded
  bool address64 = false;
  bool debug = false;
  u32 container = 0;  // index of the container (one registered module) in the file
  u64 offset = 0;     // payload offset: in the file for read_fatbins, else in the section
  u64 size = 0;       // payload bytes as stored (compressed size when compressed)
  u64 uncompressed_size = 0;

  // "sm_90a", "compute_80", "sm_100f".
  std::string arch_name() const;
};

struct FatbinInfo {
  std::vector<FatbinEntry> entries;
  u32 containers = 0;
  std::vector<std::string> problems;  // "__nv_relfatbin+0x40: entry header size 12 is below 64"

  bool empty() const { return entries.empty(); }
};

// Every fatbinary entry of `.nv_fatbin` and `__nv_relfatbin`, in file order. Offsets are file
// offsets. A file without those sections gives an empty result and no problem.
FatbinInfo read_fatbins(const elf::ElfFile& file);

// The entries of one section's bytes. `section` names the section in problem strings and marks
// entries of `__nv_relfatbin` relocatable; `base` is added to payload offsets.
FatbinInfo parse_fatbin_section(Bytes bytes, std::string_view section = ".nv_fatbin", u64 base = 0);

}  // namespace envdoctor::cuda
