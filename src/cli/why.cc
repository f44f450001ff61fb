// `envdoctor why NAME`: checks::explain_why over the same run of every check that `check` makes,
// rendered by report::render_why_text; exit 1 when what was asked will not load, so that `why`
// and `check` never disagree about it.
#include <iostream>

#include "checks/run.h"
#include "checks/why.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_why(const CheckOptions& options, const std::string& name) {
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return 2;
  std::string error;
  std::optional<checks::CudaTarget> gpu = checks::resolve_cuda_target({}, "", &error);
  if (!gpu) return tool_failure(error);
  checks::CheckSettings settings;
  settings.gpu = *gpu;
  checks::CheckRun run = checks::run_checks(*session->env, session->knowledge, session->tables, settings);
  std::optional<checks::WhyAnswer> answer = checks::explain_why(*session->env, run.edges, run.findings, name, &error);
  if (!answer) return tool_failure(error);
  std::cout << report::render_why_text(*answer);
  return answer->will_not_load() ? 1 : 0;
}

}  // namespace envdoctor::cli
