// Running another program, as envdoctor does in exactly two places: the interpreter's probe
// (`python -`, the script on stdin) and nvidia-smi. Never through a shell: argv goes to posix_spawn
// as it is, stdin is `input` through a pipe (or /dev/null when there is none), stdout and stderr are captured through
// pipes (each bounded), and the child is killed when it outlives its time. A child still running when the scope ends is
// killed and reaped, so no early return leaves a zombie or a stray interpreter behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/types.h"

namespace envdoctor::support {

struct ProcessResult {
  int status = -1;  // the exit status; 128+signal for a signal
  std::string out, err;
};

// Runs `argv` (a bare argv[0] is looked up on PATH as execvp would). nullopt with `error` set
// when it could not be started, timed out, or wrote more than `max_output` bytes to either stream.
// `input` goes to the child's stdin, which is then closed; a child that exits without reading it
// all is not an error.
std::optional<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                         u64 max_output, std::string* error, std::string_view input = {});

}  // namespace envdoctor::support
