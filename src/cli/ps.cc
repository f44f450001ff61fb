// `envdoctor ps PID`: live::read_process, then (for a Python) the environment it runs in and its
// load check, then checks::examine_process; rendered by report::render_ps_*.
#include <iostream>
#include <optional>

#include "checks/live_checks.h"
#include "checks/load_checks.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "live/proc.h"
#include "report/report.h"

namespace envdoctor::cli {

int run_ps(const std::string& pid_text, bool json) {
  int pid = 0;
  size_t used = 0;
  try {
    pid = std::stoi(pid_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != pid_text.size() || pid <= 0) return tool_failure("ps: '" + pid_text + "' is not a process id");
  std::string error;
  std::optional<live::LiveProcess> process = live::read_process(pid, &error);
  if (!process) return tool_failure(error);

  // The environment it runs in, with the LD_LIBRARY_PATH it runs with (none when it has none).
  std::string python = live::python_of(*process);
  std::optional<Session> session;
  std::optional<checks::LoadCheckResult> loads;
  if (!python.empty()) {
    EnvironmentRequest request{python, "", false, {}};
    request.loader.ld_library_path = "";
    for (const std::string& var : process->environ)
      if (var.rfind("LD_LIBRARY_PATH=", 0) == 0) request.loader.ld_library_path = var.substr(16);
    session = open_session(request);
    if (!session) return 2;
    loads = checks::check_loads(*session->env, session->knowledge);
  }
  checks::LiveExamination examined =
      checks::examine_process(*process, session ? session->env.get() : nullptr, loads ? &*loads : nullptr,
                              session ? &session->knowledge : nullptr, python);
  if (json) {
    std::cout << report::render_ps_json(examined);
  } else {
    report::TextOptions text;
    text.color = use_color();
    std::cout << report::render_ps_text(examined, text);
  }
  for (const checks::Finding& f : examined.findings)
    if (f.severity == checks::Severity::kError) return 1;
  return 0;
}

}  // namespace envdoctor::cli
