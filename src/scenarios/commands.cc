#include "scenarios/commands.h"

#include <chrono>

#include "environment/file_view.h"
#include "python/wheel.h"
#include "scenarios/fix_trial.h"
#include "scenarios/uv_plan.h"
#include "support/subprocess.h"

namespace envdoctor::scenarios {

namespace {

// What the installer printed is kept whole up to here; the server keeps its last 16 kB.
constexpr u64 kInstallerOutputLimit = u64{64} << 20;

}  // namespace

bool check_arguments_valid(const CheckRequest& request, std::string* error) {
  if (request.verify_hashes && !environment::sha256_available(error)) return false;
  for (const std::string& wheel : request.with)
    if (!python::wheel_file_exists(wheel, error)) {
      *error = "--with " + *error;
      return false;
    }
  return true;
}

std::function<void(const checks::CheckSettings&, checks::CheckRun&)> fix_vetting(const environment::Session& session) {
  return [&session](const checks::CheckSettings& settings, checks::CheckRun& run) {
    try_fixes(*session.env, session.knowledge, session.tables, settings, run);
  };
}

std::optional<CheckOutcome> check(const environment::Session& session, const CheckRequest& request,
                                  std::string* error) {
  checks::CheckSettings settings;
  settings.verify_hashes = request.verify_hashes;
  settings.all_files = request.all_files;
  settings.gpu = session.node;
  settings.on_file = request.on_file;
  settings.on_hash = request.on_hash;
  settings.edges = request.edges;
  CheckOutcome out;
  if (!request.simulating()) {
    out.run = checks::run_checks({*session.env, session.knowledge, session.tables, settings});
    // Every command offered is tried on the model first: none that harms is offered.
    fix_vetting(session)(settings, out.run);
    return out;
  }
  Changes changes{request.without, request.with, request.verify_hashes, {}, {}};
  ChangeSummary summary;
  std::optional<ChangedRun> changed =
      check_change(*session.env, session.knowledge, session.tables, settings, changes, error, &summary);
  if (!changed) return std::nullopt;
  out.run = std::move(changed->run);
  out.changed = std::move(changed->env);
  out.change = std::move(summary);
  return out;
}

std::optional<PipCheck> check_installer_change(const environment::Session& session, const InstallerRequest& request,
                                               std::string* error) {
  checks::CheckSettings settings;
  settings.gpu = session.node;
  settings.edges = false;  // the prediction is findings only
  auto check_change = request.uv ? check_uv_change : check_pip_change;
  std::optional<PipCheck> checked =
      check_change(*session.env, session.knowledge, session.tables, settings, request.action, request.args, error);
  // A fix of what the change would break installs from where the user's own command installs.
  if (checked && checked->prediction)
    keep_user_index_options(*checked->prediction->env, request.args, request.uv, checked->prediction->run.findings);
  return checked;
}

std::optional<InstallerRun> run_installer(const environment::Session& session, const PipPlan& plan,
                                          const InstallerRequest& request, InstallerOutput output, std::string* error) {
  std::vector<std::string> command =
      request.uv ? uv_command(request.action, request.args) : pip_command(*session.env, request.action, request.args);
  InstallerRun run;
  if (output == InstallerOutput::kCaptured) {
    std::optional<support::ProcessResult> ran =
        support::run_process(command, std::chrono::hours(1), kInstallerOutputLimit, error);
    if (!ran) return std::nullopt;
    run.status = ran->status;
    run.output = ran->out + ran->err;
  } else {
    std::optional<int> status =
        support::run_attached(command, output == InstallerOutput::kAttachedStdoutToStderr, error);
    if (!status) return std::nullopt;
    run.status = *status;
  }
  // Where the installer found what it installed, for a later fix that reinstalls it offline.
  std::string problem;
  if (run.status == 0 && !remember_index_origins(*session.env, plan, request.args, &problem))
    run.problem = std::move(problem);
  return run;
}

}  // namespace envdoctor::scenarios
