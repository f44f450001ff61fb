// The persistent index (support/run_index.h) around the commands it answers: `check`, `why`,
// `cuda`, `ldd` and `tree`. The question's key is taken from the command line and this process's surroundings, the
// node's driver and GPUs read live; a fresh entry's output and status are the answer. Otherwise the
// command runs with its reads logged (support/input_log.h) and its output captured, and is kept.
#pragma once

#include <functional>

#include "environment/node.h"

namespace envdoctor::cli {

struct IndexedQuestion {
  // Where the command reads its node: the live read goes here; null for a command that reads none
  // (ldd, tree).
  environment::NodeRequest* node = nullptr;
  bool bypass = false;  // --no-cache, or a run the index cannot answer
};

// `run` answered from the index, or run and kept.
int run_indexed(int argc, char** argv, const IndexedQuestion& question, const std::function<int()>& run);

}  // namespace envdoctor::cli
