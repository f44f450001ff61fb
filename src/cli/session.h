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

  Session() = default;
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  // A command's session lasts until the process exits, which hands the environment's thousands
  // of mappings and parsed files back to the kernel at once: unmapping and freeing them one by
  // one first costs several percent of a `check`.
  ~Session() { (void)env.release(); }
};

// The one shape of "the tool could not do its job" (DESIGN.md: exit status 2): a function that
// can fail returns nullopt (or false) and fills a `std::string* error` with a sentence that names
// the file or argument; the command prints it here, once, and exits 2.
int tool_failure(const std::string& why);

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color();

// nullopt after printing "envdoctor: <why>" on stderr.
std::optional<Session> open_session(EnvironmentRequest request);

}  // namespace envdoctor::cli
