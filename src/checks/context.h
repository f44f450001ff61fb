// What every check is given: the environment, the knowledge tables, NVIDIA's tables and the
// run's settings, as one value passed first.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "checks/cuda/target.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "imports/load_memo.h"
#include "imports/python_process.h"

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

  // The one model of a Python process of this run (imports/python_process.h), built on first use
  // and shared by every check, and by the copies of this context.
  const imports::ImportModel& model() const;

  struct ModelCache {
    std::once_flag once;
    std::unique_ptr<imports::ImportModel> model;
  };
  std::shared_ptr<ModelCache> model_cache = std::make_shared<ModelCache>();
};

}  // namespace envdoctor::checks
