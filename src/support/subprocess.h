// Running another program: the interpreter's probe (`python -`, the script on stdin), nvidia-smi,
// and pip for `envdoctor pip` (its dry run and download, captured; then the user's own command,
// attached to the terminal). Never through a shell: argv goes to posix_spawn as it is, stdin is
// `input` through a pipe (or /dev/null when there is none), stdout and stderr are captured through
// pipes (each bounded), and the child is killed when it outlives its time. A child still running
// when the scope ends is killed and reaped, so no early return leaves a zombie or a stray
// interpreter behind.
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

// An executable `name` on $PATH (or `name` itself when it holds a '/'), as execvp would find it.
std::optional<std::string> find_program(const std::string& name);

// Runs `argv` attached to this process's stdin and stderr, and to its stdout, or to its stderr
// when `stdout_to_stderr` (so that a JSON document on stdout stays whole), and waits for it
// without a time limit: the user's own `pip install`, which may prompt and may take long.
// Returns its exit status (128+signal for a signal); nullopt with `error` set when it could not
// be started.
std::optional<int> run_attached(const std::vector<std::string>& argv, bool stdout_to_stderr, std::string* error);

}  // namespace envdoctor::support
