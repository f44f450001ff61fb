// `envdoctor ps PID`: queries::examine_pid, rendered by report::render_ps_*.
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/session.h"
#include "queries/live_checks.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_ps(const std::string& pid_text, bool json) {
  std::string error;
  std::optional<queries::LiveExamination> examined = queries::examine_pid(pid_text, &error);
  if (!examined) return tool_failure(error);
  if (json) {
    std::cout << report::render_ps_json(*examined);
  } else {
    report::TextOptions text;
    text.color = use_color();
    std::cout << report::render_ps_text(*examined, text);
  }
  return examined->errors() ? 1 : 0;
}

}  // namespace envdoctor::cli
