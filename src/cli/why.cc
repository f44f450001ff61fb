// `envdoctor why NAME`: checks::explain_why on the environment, rendered by report::render_why_text;
// exit 1 when what was asked will not load.
#include <iostream>

#include "checks/load_checks.h"
#include "checks/record_checks.h"
#include "checks/why.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_why(const CheckOptions& options, const std::string& name) {
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return 2;
  checks::LoadCheckResult loads = checks::check_loads(*session->env, session->knowledge);
  std::vector<checks::Finding> findings = loads.findings;
  std::vector<checks::Finding> records = checks::check_records(*session->env, session->knowledge, false, {});
  findings.insert(findings.end(), records.begin(), records.end());
  checks::sort_and_dedupe(findings);
  std::string error;
  std::optional<checks::WhyAnswer> answer = checks::explain_why(*session->env, loads, findings, name, &error);
  if (!answer) return tool_failure(error);
  std::cout << report::render_why_text(*answer);
  return answer->will_not_load() ? 1 : 0;
}

}  // namespace envdoctor::cli
