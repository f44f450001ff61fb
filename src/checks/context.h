// What every check is given: the environment, the knowledge tables, NVIDIA's tables and the
// run's settings, as one value passed first.
#pragma once

#include <cstddef>
#include <functional>

#include "checks/cuda/target.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "imports/load_memo.h"

namespace envdoctor::checks {

// `on_file(done, total)` is called as files are checked (for a progress line); may be empty.
using ProgressFn = std::function<void(size_t done, size_t total)>;

struct CheckSettings {
  bool verify_hashes = false;
  bool all_files = false;  // hold every file to its record, not only those that load (record_checks.h)
  CudaTarget gpu;
  ProgressFn on_file;                 // progress of the load checks, for people
  ProgressFn on_hash;                 // progress of --verify-hashes
  imports::LoadMemo* memo = nullptr;  // what a first run learnt, for a second (simulated) one
  // Whether the load graph's edges are wanted (a snapshot, a digest, `why`). Building them is a
  // good part of the load checks' cost, and no verdict reads them.
  bool edges = true;
};

struct Context {
  const environment::Environment& env;
  const environment::Knowledge& knowledge;
  const cuda::CudaTables& tables;
  const CheckSettings& settings;
};

}  // namespace envdoctor::checks
