// `envdoctor why NAME`: queries::answer_why on the environment (the findings of the same checks as
// `check`), rendered by report::render_why_text (or render_why_json); exit 1 when what was asked
// will not load, so that `why` and `check` never disagree about it.
#include <iostream>

#include "cli/commands.h"
#include "cli/session.h"
#include "queries/why.h"
#include "report/report.h"
#include "scenarios/commands.h"

namespace envdoctor::cli {

int run_why(const CheckOptions& options, const std::string& name) {
  // The node is this machine's, as check's by default; under --image its driver starts the
  // image as a GPU container (check's rule).
  EnvironmentRequest request{options.python, options.prefix, options.no_exec, options.loader, options.node};
  request.keep_until_exit = true;
  std::string error;
  std::optional<Session> session = environment::open_session(request, &error);
  if (!session) return tool_failure(error);
  // check's own trial of every fix on the model: why offers what check offers.
  std::optional<queries::WhyAnswer> answer =
      queries::answer_why(*session, name, &error, scenarios::fix_vetting(*session));
  if (!answer) return tool_failure(error);
  std::cout << (options.json ? report::render_why_json(*answer, name)
                             : report::render_why_text(*answer, output_width()));
  return answer->will_not_load() ? 1 : 0;
}

}  // namespace envdoctor::cli
