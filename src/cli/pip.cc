// `envdoctor pip install|uninstall PIP-ARGS...` and `envdoctor uv pip install|uninstall
// UV-ARGS...`: the installer's plan checked first, the installer run only if its change
// introduces no errors (DESIGN.md). The plans, the verdict and the rendering live in
// scenarios/pip_plan.h, scenarios/uv_plan.h, scenarios/simulation.h and report/pip.cc; here they are
// called in order, the same for both installers.
#include <unistd.h>

#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/session.h"
#include "python/pip.h"
#include "python/uv.h"
#include "report/report.h"
#include "scenarios/pip_plan.h"
#include "scenarios/simulation.h"
#include "scenarios/uv_plan.h"
#include "support/subprocess.h"

namespace envdoctor::cli {

using environment::open_session;
using environment::Session;
using scenarios::check_change;

namespace {

// On a terminal, the user may overrule a refusal: [y/N], no by default.
bool user_says_proceed() {
  if (!::isatty(STDIN_FILENO)) return false;
  std::cerr << "Proceed anyway? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::string force_command(const PipOptions& options, const environment::Environment& env) {
  // uv finds the environment from the user's own arguments (and the shell's), given again.
  std::string out = options.uv ? "envdoctor uv pip --force " + options.action
                               : "envdoctor pip --python " + env.python.executable + " --force " + options.action;
  for (const std::string& a : options.args) out += " " + a;
  return out;
}

}  // namespace

int run_pip(const PipOptions& options) {
  std::optional<python::PipAction> action = python::parse_pip_action(options.action);
  if (!action)
    return tool_failure(std::string(options.uv ? "uv pip" : "pip") + ": expected install or uninstall, not '" +
                        options.action + "'");
  std::string error;
  std::string python = options.python;
  if (options.uv) {
    std::optional<std::string> found = scenarios::uv_python(options.args, &error);
    if (!found) return tool_failure(error);
    python = *found;
  }
  std::optional<Session> session = open_session({python, "", false, options.loader});
  if (!session) return 2;
  const environment::Environment& env = *session->env;
  if (std::string note = scenarios::uv_note(env); !note.empty() && !options.uv) std::cerr << note << "\n";

  std::optional<checks::CudaTarget> gpu = checks::resolve_cuda_target({}, "", &error);
  if (!gpu) return tool_failure(error);
  checks::CheckSettings settings;
  settings.gpu = *gpu;
  settings.edges = false;  // the prediction is findings only
  auto check_change = options.uv ? scenarios::check_uv_change : scenarios::check_pip_change;
  std::optional<scenarios::PipCheck> checked =
      check_change(env, session->knowledge, session->tables, settings, *action, options.args, &error);
  if (!checked) return tool_failure(error);
  const scenarios::PipPlan* plan = &checked->plan;
  // A fix of what the change would break installs from where the user's own command installs.
  if (checked->prediction)
    scenarios::keep_user_index_options(*checked->prediction->env, options.args, options.uv,
                                       checked->prediction->run.findings);

  report::PipReport pip_report;
  pip_report.plan = plan;
  pip_report.force_command = force_command(options, env);
  pip_report.verdict = checked->verdict;
  if (checked->prediction)
    pip_report.prediction = report::environment_report(*checked->prediction->env, std::move(checked->prediction->run));

  if (options.json) {
    std::cout << report::render_pip_json(pip_report);
  } else {
    report::TextOptions text;
    text.color = use_color();
    text.width = output_width();
    std::cout << report::render_pip_text(pip_report, text);
  }
  std::cout.flush();
  // A refusal may be overruled at a terminal; a change that could not be checked is installed
  // unchecked only with --force (issue 10).
  bool proceed = pip_report.verdict == scenarios::PipVerdict::kSafe || options.force ||
                 (pip_report.verdict == scenarios::PipVerdict::kRefused && user_says_proceed());
  if (!proceed) {
    // The installer does not run, so its own warnings for names it would skip are said here.
    for (const std::string& name : plan->not_installed)
      std::cerr << (options.uv ? python::uv_not_installed_warning(name) : python::not_installed_warning(name)) << "\n";
    return scenarios::status_without_pip(*plan);
  }
  std::vector<std::string> command =
      options.uv ? scenarios::uv_command(*action, options.args) : scenarios::pip_command(env, *action, options.args);
  std::optional<int> status = support::run_attached(command, options.json, &error);
  if (!status) return tool_failure(error);
  // Where the installer found what it installed, for a later fix that reinstalls it offline.
  if (*status == 0 && !scenarios::remember_index_origins(env, *plan, options.args, &error))
    std::cerr << "envdoctor: " << error << "\n";
  return *status;
}

}  // namespace envdoctor::cli
