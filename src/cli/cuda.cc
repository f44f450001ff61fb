// `envdoctor cuda`: queries::summarize_environment_cuda on the environment, rendered by src/report/cuda.cc.
#include <iostream>

#include "cli/commands.h"
#include "cli/session.h"
#include "queries/cuda_summary.h"
#include "report/report.h"

namespace envdoctor::cli {

using environment::open_session;
using environment::Session;

int run_cuda(const CudaCommandOptions& options) {
  std::optional<checks::CudaTarget> target = cuda_target(options.gpus, options.driver, options.node);
  if (!target) return 2;
  std::optional<Session> session =
      open_session({options.python, options.prefix, false, for_target(options.loader, *target)});
  if (!session) return 2;
  const environment::Environment& env = *session->env;
  queries::CudaSummary summary =
      queries::summarize_environment_cuda(env, session->knowledge, session->tables, std::move(*target));
  std::cout << (options.json ? report::render_cuda_json(summary) : report::render_cuda_text(summary));
  std::cout.flush();
  return 0;
}

}  // namespace envdoctor::cli
