// `envdoctor pip install|uninstall PIP-ARGS...`: pip's plan checked first, pip run only if its
// change introduces no errors (DESIGN.md). The plan, the verdict and the rendering live in
// checks/pip_plan.h, checks/simulation.h and report/pip.cc; here they are called in order.
#include <unistd.h>

#include <iostream>
#include <string>

#include "checks/pip_plan.h"
#include "checks/simulation.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "python/pip.h"
#include "report/report.h"
#include "support/subprocess.h"

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

std::string force_command(const PipOptions& options, const checks::Environment& env) {
  std::string out = "envdoctor pip --python " + env.python.executable + " --force " + options.action;
  for (const std::string& a : options.args) out += " " + a;
  return out;
}

}  // namespace

int run_pip(const PipOptions& options) {
  if (options.action != "install" && options.action != "uninstall")
    return tool_failure("pip: expected install or uninstall, not '" + options.action + "'");
  std::string error;
  std::optional<Session> session = open_session({options.python, "", false, options.loader});
  if (!session) return 2;
  checks::Environment& env = *session->env;
  if (std::string note = checks::uv_note(env); !note.empty()) std::cerr << note << "\n";

  std::optional<checks::CudaTarget> gpu = checks::resolve_cuda_target({}, "", &error);
  if (!gpu) return tool_failure(error);
  checks::CheckSettings settings;
  settings.gpu = *gpu;
  settings.edges = false;  // the prediction is findings only
  std::optional<checks::PipCheck> checked = checks::check_pip_change(env, session->knowledge, session->tables, settings,
                                                                     options.action, options.args, &error);
  if (!checked) return tool_failure(error);
  const checks::PipPlan* plan = &checked->plan;

  report::PipReport pip_report;
  pip_report.plan = plan;
  pip_report.force_command = force_command(options, env);
  pip_report.verdict = checked->verdict;
  if (checked->prediction) pip_report.prediction = report::environment_report(env, std::move(*checked->prediction));

  if (options.json) {
    std::cout << report::render_pip_json(pip_report);
  } else {
    report::TextOptions text;
    text.color = use_color();
    std::cout << report::render_pip_text(pip_report, text);
  }
  std::cout.flush();
  // A refusal may be overruled at a terminal; a change that could not be checked is installed
  // unchecked only with --force (issue 10).
  bool proceed = pip_report.verdict == checks::PipVerdict::kSafe || options.force ||
                 (pip_report.verdict == checks::PipVerdict::kRefused && user_says_proceed());
  if (!proceed) {
    // pip does not run, so pip's own warnings for names it would skip are said here.
    for (const std::string& name : plan->not_installed) std::cerr << python::not_installed_warning(name) << "\n";
    return checks::status_without_pip(*plan);
  }
  std::optional<int> status =
      support::run_attached(checks::pip_command(env, options.action, options.args), options.json, &error);
  if (!status) return tool_failure(error);
  return *status;
}

}  // namespace envdoctor::cli
