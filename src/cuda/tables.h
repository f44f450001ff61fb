// The CUDA knowledge tables: which driver each CUDA release needs, and which CUDA release
// introduced each PTX ISA version. Data, not code: they live in data/cuda.json (sources cited
// there) and are read once at start-up, so a new CUDA release is a data change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/versions.h"

namespace envdoctor::cuda {

struct ToolkitDriverMinimum {
  MajorMinor cuda;
  std::string release;  // "12.8 Update 1"
  DriverVersion linux_driver;
  bool verified = true;
};

struct CudaTables {
  std::vector<ToolkitDriverMinimum> toolkit_driver_minimum;  // in file order
  std::vector<std::pair<int, DriverVersion>> minor_version_floor;  // CUDA major -> driver
  std::vector<std::pair<MajorMinor, MajorMinor>> ptx_isa;          // ISA -> CUDA release, ascending

  // The driver a CUDA `runtime` release needs for full compatibility: the lowest over its
  // releases (its GA). nullopt for a release not in the table.
  std::optional<DriverVersion> full_compat_driver(MajorMinor runtime) const;
  // The floor of minor-version compatibility for a CUDA major (11 -> 450.80.02): with it, a
  // 12.x runtime runs on any 12.x-era driver, minus features that need the newer driver (PTX
  // JIT of a newer ISA among them).
  std::optional<DriverVersion> minor_compat_driver(int cuda_major) const;
  // The CUDA release that introduced PTX ISA `isa`: the first table entry at or above it
  // (unreleased ISA numbers such as 8.6 map up to the next release). nullopt past the table.
  std::optional<MajorMinor> cuda_for_ptx_isa(MajorMinor isa) const;
  // The driver that can JIT PTX ISA `isa`: the GA driver of the release that introduced it.
  // ISA versions below the table (pre-CUDA 11) need no more than any table driver.
  std::optional<DriverVersion> driver_for_ptx_isa(MajorMinor isa) const;
  // The highest driver minimum in the table: anything newer than the table needs at least this.
  std::optional<DriverVersion> newest_driver() const;
};

// The directory the tables are read from: $ENVDOCTOR_DATA_DIR when set; PREFIX/share/envdoctor
// for a binary installed as PREFIX/bin/envdoctor (make install, the wheel) when it exists; else
// the source tree's data/ (the ENVDOCTOR_DATA_DIR macro).
std::string default_data_dir();

// Reads `<data_dir>/cuda.json`. On a missing or malformed file returns nullopt with `error` set
// to "<path>: <what>".
std::optional<CudaTables> load_cuda_tables(const std::string& data_dir, std::string* error);

}  // namespace envdoctor::cuda
