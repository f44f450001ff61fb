// The checks stage as a whole: every family of checks over one environment, findings sorted
// and de-duplicated. `check` runs it once, or twice around a simulated change.
#pragma once

#include <string>
#include <vector>

#include "checks/cuda/cuda_checks.h"
#include "checks/finding.h"
#include "checks/load_checks.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::checks {

struct CheckSettings {
  bool verify_hashes = false;
  bool all_files = false;  // hold every file to its record, not only those that load (RecordScope)
  CudaTarget gpu;
  ProgressFn on_file;        // progress of the load checks, for people
  ProgressFn on_hash;        // progress of --verify-hashes
  LoadMemo* memo = nullptr;  // what a first run learnt, for a second (simulated) one
  // Whether CheckRun::edges is wanted (a snapshot, a digest). Building it is a good part of the
  // load checks' cost, and no verdict reads it.
  bool edges = true;
};

struct CheckRun {
  std::vector<Finding> findings;
  std::vector<std::string> notes;    // what was not checked, and why
  bool needs_absent_driver = false;  // files need the NVIDIA driver's libraries, and there is no driver
  // What the verdicts were drawn from, for a snapshot: every NEEDED entry as the load model
  // resolved it, and the CUDA facts.
  std::vector<Edge> edges;
  CudaInventory cuda;
};

CheckRun run_checks(const environment::Environment& env, const environment::Knowledge& knowledge,
                    const cuda::CudaTables& tables, const CheckSettings& settings);

}  // namespace envdoctor::checks
