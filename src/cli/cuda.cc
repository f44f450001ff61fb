// `envdoctor cuda`: queries::summarize_environment_cuda on the environment, rendered by src/report/cuda.cc.
#include <iostream>

#include "cli/commands.h"
#include "cli/session.h"
#include "queries/cuda_summary.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_cuda(const CudaCommandOptions& options) {
  EnvironmentRequest request{options.python, options.prefix, false, options.loader, options.node};
  request.keep_until_exit = true;
  std::string error;
  std::optional<Session> session = environment::open_session(request, &error);
  if (!session) return tool_failure(error);
  queries::CudaSummary summary = queries::summarize_environment_cuda(*session);
  std::cout << (options.json ? report::render_cuda_json(summary) : report::render_cuda_text(summary));
  std::cout.flush();
  return 0;
}

}  // namespace envdoctor::cli
