// `envdoctor why NAME`: queries::answer_why on the environment (the findings of the same checks as
// `check`), rendered by report::render_why_text (or render_why_json); exit 1 when what was asked
// will not load, so that `why` and `check` never disagree about it.
#include <iostream>

#include "cli/commands.h"
#include "cli/session.h"
#include "queries/why.h"
#include "report/report.h"
#include "scenarios/fix_trial.h"

namespace envdoctor::cli {

using environment::open_session;
using environment::Session;

int run_why(const CheckOptions& options, const std::string& name) {
  environment::LoaderOptions loader = options.loader;
  if (!loader.image.empty()) {
    // The image as its GPU container starts it, when a driver is known (check's rule).
    std::optional<checks::CudaTarget> target = cuda_target(options.gpus, options.driver, options.node);
    if (!target) return 2;
    loader = for_target(loader, *target);
  }
  EnvironmentRequest request{options.python, options.prefix, options.no_exec, loader};
  std::optional<Session> session = open_session(request);
  if (!session) return 2;
  std::string error;
  // check's own trial of every fix on the model: why offers what check offers.
  auto vet = [&](const checks::CheckSettings& settings, checks::CheckRun& run) {
    scenarios::try_fixes(*session->env, session->knowledge, session->tables, settings,
                         scenarios::reopen_request(request), run);
  };
  std::optional<queries::WhyAnswer> answer =
      queries::answer_why(*session->env, session->knowledge, session->tables, name, &error, vet);
  if (!answer) return tool_failure(error);
  std::cout << (options.json ? report::render_why_json(*answer, name)
                             : report::render_why_text(*answer, output_width()));
  return answer->will_not_load() ? 1 : 0;
}

}  // namespace envdoctor::cli
