// The CUDA knowledge tables: which driver each CUDA release needs, which release and driver
// branch introduced each PTX ISA version, which GPU architectures exist and which `f` family
// runs where. Data, not code: they live in data/cuda.json and are read once at start-up, so a
// new CUDA release is a data change.
//
// Every row carries its sources and whether NVIDIA's own text confirms it. The tables end where
// the collected facts end, and the queries say so instead of guessing past them: a release, a
// PTX ISA, a driver or a GPU newer than the tables is "unknown" (nullopt, or a `beyond_*`
// predicate), never the nearest row stretched over it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/versions.h"

namespace envdoctor::cuda {

// Where a row comes from: keys of data/cuda.json's "sources" ("S1, S2"), and whether the row was
// read in NVIDIA's text or an NVIDIA repository (confirmed) or only in a third party's quote of
// it, or carried over unchecked (secondary).
struct Provenance {
  std::string source;
  bool confirmed = true;
};

struct ToolkitDriverMinimum {
  MajorMinor cuda;
  std::string release;  // "12.8 Update 1"
  DriverVersion linux_driver;
  Provenance provenance;
};

struct MinorVersionFloor {
  int cuda_major = 0;
  DriverVersion linux_driver;  // "580": the branch, when NVIDIA gives no patch level
  Provenance provenance;
};

// One row of the PTX ISA release history: ISA 9.4 came with CUDA 13.4 and driver branch r615.
struct PtxIsaRelease {
  MajorMinor isa;
  MajorMinor cuda;
  std::optional<int> driver_branch;  // nullopt where NVIDIA's table gives none (pre-12.0, 9.5)
  Provenance provenance;
};

struct Architecture {
  int sm = 0;  // 10 * major + minor
  Provenance provenance;
};

// An sm number that older toolkits gave a GPU now numbered otherwise: Thor's sm_101 (CUDA <= 12.9)
// is sm_110 from CUDA 13.0.
struct Renamed {
  int sm = 0;
  int is = 0;
  Provenance provenance;
};

// compute_100f runs on 10.0, 10.3 and 10.7.
struct Family {
  int sm = 0;
  std::vector<int> runs_on;
  Provenance provenance;
};

// CUDA 13 supports Turing (7.5) and newer.
struct MinimumArchitecture {
  int cuda_major = 0;
  int sm = 0;
  Provenance provenance;
};

struct CudaTables {
  std::vector<ToolkitDriverMinimum> toolkit_driver_minimum;  // in file order
  std::vector<MinorVersionFloor> minor_version_floor;
  std::vector<PtxIsaRelease> ptx_isa;  // ascending by ISA
  std::vector<Architecture> architectures;
  std::vector<Renamed> renamed;
  std::vector<Family> families;
  std::vector<MinimumArchitecture> minimum_architecture;
  std::vector<std::pair<std::string, std::string>> sources;  // "S1" -> its address

  // --- drivers and releases ---

  // The driver a CUDA `runtime` release needs for full compatibility: the lowest Table 3 row of
  // the release (its GA), else the driver branch the PTX table pairs with it (13.4: r615).
  // nullopt for a release neither table lists.
  std::optional<DriverVersion> full_compat_driver(MajorMinor runtime) const;
  // The floor of minor-version compatibility for a CUDA major (13 -> 580): with it, a 13.x
  // runtime runs, minus features that need the newer driver (PTX JIT of a newer ISA among them).
  std::optional<DriverVersion> minor_compat_driver(int cuda_major) const;
  // The newest CUDA release whose driver the tables know (13.4): a runtime past it has a driver
  // requirement nobody here knows.
  std::optional<MajorMinor> newest_release() const;
  bool release_beyond_table(MajorMinor runtime) const;
  // The highest driver any row names: a Table 3 minimum or a PTX driver branch.
  std::optional<DriverVersion> newest_driver() const;
  // A driver of a newer branch than every row: what it runs past the tables is unknown.
  bool driver_beyond_table(const DriverVersion& driver) const;
  // The newest CUDA release a driver runs in full (595.45.04 -> 13.2). nullopt for a driver older
  // than every row, and for one beyond the tables (unknown, not "the newest we know").
  std::optional<MajorMinor> newest_cuda_for_driver(const DriverVersion& driver) const;

  // --- PTX ---

  // The CUDA release that introduced PTX ISA `isa`: the first row at or above it. nullopt past
  // the table.
  std::optional<MajorMinor> cuda_for_ptx_isa(MajorMinor isa) const;
  // The driver that can JIT PTX ISA `isa`: its driver branch (9.4 -> 615), else the GA driver of
  // its release. ISA versions below the table need no more than any table driver. nullopt past
  // the table, and for a row whose driver NVIDIA has not given (9.5).
  std::optional<DriverVersion> driver_for_ptx_isa(MajorMinor isa) const;
  std::optional<MajorMinor> newest_ptx_isa_with_driver() const;

  // --- architectures ---

  // The sm number a GPU or a cubin has under the current numbering (101 -> 110).
  int current_sm(int sm) const;
  // A GPU the architecture table does not know, newer than its oldest row (sm_130, sm_122): which
  // code runs on it is not told by extrapolating the rules. Older GPUs are judged as before.
  bool gpu_beyond_table(int gpu_sm) const;
  int newest_sm() const;
  // The compute capabilities an `f` build for `sm` runs on; nullptr for a family the table lacks.
  const std::vector<int>* family(int sm) const;
  // The oldest GPU a CUDA major supports (13 -> 75); nullopt when the table does not say.
  std::optional<int> minimum_sm(int cuda_major) const;
};

// The directory the tables are read from: $ENVDOCTOR_DATA_DIR when set; PREFIX/share/envdoctor
// for a binary installed as PREFIX/bin/envdoctor (make install, the wheel) when it exists; else
// the source tree's data/ (the ENVDOCTOR_DATA_DIR macro).
std::string default_data_dir();

// What is wrong with the tables as data: a row without a known source, versions out of order,
// one release paired with two drivers. Empty for the shipped file (tests/cuda/tables_test.cc).
std::vector<std::string> check_tables(const CudaTables& tables);

// Reads `<data_dir>/cuda.json`. On a missing or malformed file returns nullopt with `error` set
// to "<path>: <what>".
std::optional<CudaTables> load_cuda_tables(const std::string& data_dir, std::string* error);

}  // namespace envdoctor::cuda
