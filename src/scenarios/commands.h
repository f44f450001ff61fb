// `check` and `pip` (with `uv pip`), each written once for the command line and the MCP server:
// the session they start from (environment/session.h) in, the run of the checks, the change's
// verdict or the installer's outcome out. The command line parses its arguments into these
// requests and renders what comes back; the MCP tool does the same with its JSON arguments.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/run.h"
#include "environment/session.h"
#include "python/pip.h"
#include "scenarios/pip_plan.h"
#include "scenarios/simulation.h"

namespace envdoctor::scenarios {

// What `check` is asked besides its environment and node.
struct CheckRequest {
  bool verify_hashes = false;        // --verify-hashes
  bool all_files = false;            // --all-files
  bool edges = false;                // the load graph's edges (a digest's); no verdict reads them
  std::vector<std::string> without;  // --without PKG
  std::vector<std::string> with;     // --with WHEEL
  checks::ProgressFn on_file;        // progress, for people
  checks::ProgressFn on_hash;

  bool simulating() const { return !without.empty() || !with.empty(); }
};

// What `check` can refuse before any environment is opened: --verify-hashes where sha256 cannot
// be computed, a --with wheel that is not there. false with `error` set.
bool check_arguments_valid(const CheckRequest& request, std::string* error);

struct CheckOutcome {
  checks::CheckRun run;
  std::optional<ChangeSummary> change;                      // with --with or --without
  std::unique_ptr<const environment::Environment> changed;  // the environment as the change leaves it

  // The environment the findings are about: as the change leaves it, else the session's.
  const environment::Environment& env(const environment::Session& session) const {
    return changed ? *changed : *session.env;
  }
};

// `check` on the session's environment, for its node: every check, and with --with or --without
// on the environment as the change leaves it (check_change); without a change, every fix is
// tried on the model first (fix_trial.h). nullopt with `error` when the change cannot be made.
std::optional<CheckOutcome> check(const environment::Session& session, const CheckRequest& request, std::string* error);

// What `check` does to a run of its checks before it reports it, which `why` does too
// (queries::VetRun): every fix tried on the model of the session's environment.
std::function<void(const checks::CheckSettings&, checks::CheckRun&)> fix_vetting(const environment::Session& session);

// `pip ACTION ARGS` or `uv pip ACTION ARGS`.
struct InstallerRequest {
  bool uv = false;
  python::PipAction action = python::PipAction::kInstall;
  std::vector<std::string> args;  // the installer's, as the user gave them
};

// The installer's plan checked on the session's environment (check_pip_change, check_uv_change),
// its fixes installing from where the user's own arguments install. nullopt with `error` when the
// installer cannot be asked or its plan cannot be simulated.
std::optional<PipCheck> check_installer_change(const environment::Session& session, const InstallerRequest& request,
                                               std::string* error);

// How the installer runs: attached to the terminal, as the user's own command would (the command
// line; its stdout on stderr with `stdout_to_stderr`), or with its output captured (the server,
// whose stdout carries protocol messages).
enum class InstallerOutput { kAttached, kAttachedStdoutToStderr, kCaptured };

struct InstallerRun {
  int status = 0;
  std::string output;   // kCaptured: what it printed, both streams
  std::string problem;  // where what it installed came from could not be recorded ("" when it was)
};

// The installer run on `plan` as `request` asks, then, after an install that succeeded, where it
// found what it installed recorded (remember_index_origins), so that a later fix reinstalls it
// offline from there. nullopt with `error` when the installer cannot be run.
std::optional<InstallerRun> run_installer(const environment::Session& session, const PipPlan& plan,
                                          const InstallerRequest& request, InstallerOutput output, std::string* error);

}  // namespace envdoctor::scenarios
