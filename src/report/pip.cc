// `envdoctor pip` and `envdoctor uv pip` for people: the installer's plan, the findings its change would bring (check's
// text, restricted to what is new), and the verdict with what to do next.
#include <sstream>

#include "report/report.h"
#include "support/text.h"

namespace envdoctor::report {

namespace {

// The installer as the user typed it: "pip", "uv pip".
std::string command_name(const scenarios::PipPlan& plan) {
  return plan.installer == scenarios::Installer::kUv ? "uv pip" : "pip";
}

std::string plan_line(const scenarios::PipPlan& plan) {
  std::vector<std::string> items;
  if (plan.action == python::PipAction::kUninstall) {
    for (const scenarios::PipItem& r : plan.remove) items.push_back(r.name + " " + r.version);
    return command_name(plan) + " uninstall would remove " +
           (items.empty() ? std::string("nothing") : support::join(items, ", "));
  }
  for (const scenarios::PipItem& i : plan.install) {
    std::string item = i.name + " " + i.version;
    if (!i.replaces.empty()) item += " (replacing " + i.replaces + ")";
    items.push_back(item);
  }
  return command_name(plan) + " install would install " +
         (items.empty() ? std::string("nothing") : support::join(items, ", "));
}

std::string errors_phrase(size_t n) { return std::to_string(n) + (n == 1 ? " error" : " errors"); }

}  // namespace

std::string render_pip_text(const PipReport& report, const TextOptions& options) {
  const scenarios::PipPlan& plan = *report.plan;
  std::ostringstream out;
  if (report.verdict != scenarios::PipVerdict::kCannotCheck || !plan.install.empty()) out << plan_line(plan) << "\n";
  if (report.prediction) {
    Report fresh = *report.prediction;
    std::erase_if(fresh.findings, [](const checks::Finding& f) { return !f.is_new; });
    fresh.notes.clear();
    if (fresh.findings.empty()) out << "The change brings no new errors or warnings.\n";
    else out << "\n" << render_text(fresh, options) << "\n";
  }
  if (report.predict_only) {
    if (report.verdict == scenarios::PipVerdict::kCannotCheck) out << plan.cannot_check << "\n";
    else if (report.verdict == scenarios::PipVerdict::kSafe) out << "No new errors: this change is safe to make.\n";
    else
      out << "This change would introduce " << errors_phrase(scenarios::new_errors(report.prediction->findings))
          << ".\n";
    return out.str();
  }
  const std::string tool = scenarios::installer_name(plan.installer);  // the program that runs
  switch (report.verdict) {
    case scenarios::PipVerdict::kSafe: out << "No new errors: running " << tool << ".\n"; break;
    case scenarios::PipVerdict::kRefused:
      out << "Refused: this change would introduce "
          << errors_phrase(scenarios::new_errors(report.prediction->findings)) << "; " << tool
          << " was not run and nothing changed.\n"
          << "To make it anyway: " << report.force_command << "\n";
      break;
    case scenarios::PipVerdict::kCannotCheck:
      out << plan.cannot_check << "\n";
      if (!plan.not_found.empty()) {
        out << support::join(plan.not_found) << (plan.not_found.size() == 1 ? " is" : " are")
            << " offered in no form, wheel or source, by the indexes and links " << tool
            << " was given (`pip index versions` finds none): nothing was installed, and installing unchecked "
               "would fail the same way.\n";
        break;
      }
      if (plan.dry_run_status && plan.action == python::PipAction::kInstall)
        out << tool << " could not plan this change from wheels alone (envdoctor asks it with "
            << (plan.installer == scenarios::Installer::kUv ? "--only-binary :all:" : "--only-binary=:all:")
            << ": the files of a source distribution are known only after it is built, and envdoctor runs no "
               "build).\n";
      if (plan.action == python::PipAction::kUninstall)
        out << "Cannot check this change, so nothing was uninstalled. To uninstall it unchecked: "
            << report.force_command << "\n";
      else
        out << "Cannot check this change, so nothing was installed. To install it unchecked: " << report.force_command
            << "\n";
      break;
  }
  return out.str();
}

}  // namespace envdoctor::report
