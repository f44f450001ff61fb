// Running another program, as envdoctor does in exactly two places: the interpreter's probe
// (`python -c`) and nvidia-smi. Never through a shell: argv goes to posix_spawn as it is, stdin
// is /dev/null, stdout and stderr are captured through pipes (each bounded), and the child is
// killed when it outlives its time. A child still running when the scope ends is killed and
// reaped, so no early return leaves a zombie or a stray interpreter behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "support/types.h"

namespace envdoctor::support {

struct ProcessResult {
  int status = -1;  // the exit status; 128+signal for a signal
  std::string out, err;
};

// Runs `argv` (a bare argv[0] is looked up on PATH as execvp would). nullopt with `error` set
// when it could not be started, timed out, or wrote more than `max_output` bytes to either stream.
std::optional<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                         u64 max_output, std::string* error);

}  // namespace envdoctor::support
