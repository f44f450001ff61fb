// What the environment-level subcommands (check, why, cuda) start from: the environment built
// from the common options (--python, --prefix, --no-exec, --root, --ld-library-path) and the
// knowledge tables. A failure is printed once, here, and is the tool's exit status 2.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "checks/environment.h"
#include "checks/knowledge.h"
#include "cli/commands.h"
#include "cuda/tables.h"

namespace envdoctor::cli {

struct EnvironmentRequest {
  std::string python;  // --python EXE
  std::string prefix;  // --prefix DIR
  bool no_exec = false;
  LoaderOptions loader;
};

struct Session {
  std::unique_ptr<checks::Environment> env;
  checks::Knowledge knowledge;
  cuda::CudaTables tables;
};

// nullopt after printing "envdoctor: <why>" on stderr.
std::optional<Session> open_session(const EnvironmentRequest& request);

}  // namespace envdoctor::cli
