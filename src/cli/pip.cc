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
#include "scenarios/commands.h"
#include "scenarios/uv_plan.h"

namespace envdoctor::cli {

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
  EnvironmentRequest request{python, "", false, options.loader, environment::NodeRequest{}};
  request.keep_until_exit = true;
  std::optional<Session> session = environment::open_session(request, &error);
  if (!session) return tool_failure(error);
  const environment::Environment& env = *session->env;
  if (std::string note = scenarios::uv_note(env); !note.empty() && !options.uv) std::cerr << note << "\n";

  scenarios::InstallerRequest installer{options.uv, *action, options.args};
  std::optional<scenarios::PipCheck> checked = scenarios::check_installer_change(*session, installer, &error);
  if (!checked) return tool_failure(error);
  const scenarios::PipPlan* plan = &checked->plan;
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
  std::optional<scenarios::InstallerRun> ran = scenarios::run_installer(
      *session, *plan, installer,
      options.json ? scenarios::InstallerOutput::kAttachedStdoutToStderr : scenarios::InstallerOutput::kAttached,
      &error);
  if (!ran) return tool_failure(error);
  if (!ran->problem.empty()) std::cerr << "envdoctor: " << ran->problem << "\n";
  return ran->status;
}

}  // namespace envdoctor::cli
