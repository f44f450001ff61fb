// What the environment-level subcommands (check, why, cuda, pip, ps) start from: the session of
// environment/session.h. A failure is printed once, here, and is the tool's exit status 2.
#pragma once

#include <optional>
#include <string>

#include "checks/cuda/inventory.h"
#include "cli/commands.h"
#include "environment/session.h"

namespace envdoctor::cli {

using environment::EnvironmentRequest;
using environment::Session;

// The one shape of "the tool could not do its job" (DESIGN.md: exit status 2): a function that
// can fail returns nullopt (or false) and fills a `std::string* error` with a sentence that names
// the file or argument; the command prints it here, once, and exits 2.
int tool_failure(const std::string& why);

// The width text output keeps to: COLUMNS, else the terminal's (stdout), else report::kTextWidth.
size_t output_width();

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color();

// The GPUs and driver to check against: --node's snapshot, else --gpu and --driver with this
// machine's for what they leave out. nullopt after printing why (exit status 2).
std::optional<checks::CudaTarget> cuda_target(const std::vector<std::string>& gpus, const std::string& driver,
                                              const std::string& node);

// nullopt after printing "envdoctor: <why>" on stderr.
std::optional<Session> open_session(const EnvironmentRequest& request);
// `loader` for `target`: with --image and a driver, the image runs as a GPU container on it.
environment::LoaderOptions for_target(environment::LoaderOptions loader, const checks::CudaTarget& target);

}  // namespace envdoctor::cli
