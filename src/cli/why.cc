// `envdoctor why NAME`: checks::explain_why on the environment, rendered by report::render_why_text.
#include <iostream>

#include "checks/load_checks.h"
#include "checks/why.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_why(const CheckOptions& options, const std::string& name) {
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return 2;
  checks::LoadCheckResult loads = checks::check_loads(*session->env, session->knowledge);
  std::string error;
  std::optional<checks::WhyAnswer> answer = checks::explain_why(*session->env, loads, name, &error);
  if (!answer) return tool_failure(error);
  std::cout << report::render_why_text(*answer);
  return 0;
}

}  // namespace envdoctor::cli
