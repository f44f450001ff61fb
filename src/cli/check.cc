// `envdoctor check`: the whole pipeline on one Python environment.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "checks/environment.h"
#include "checks/file_view.h"
#include "checks/knowledge.h"
#include "checks/run.h"
#include "checks/simulation.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cuda/tables.h"
#include "report/progress.h"
#include "report/report.h"

namespace envdoctor::cli {

namespace {

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (!::isatty(STDOUT_FILENO) || (no_color && *no_color)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

int run_check(const CheckOptions& options) {
  std::string error;
  std::optional<checks::CudaTarget> gpu_target = checks::resolve_cuda_target(options.gpus, options.driver, &error);
  if (!gpu_target) return tool_failure(error);
  if (options.verify_hashes && !checks::sha256_available(&error)) return tool_failure(error);
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return 2;
  checks::Environment* env = session->env.get();
  const checks::Knowledge* knowledge = &session->knowledge;
  const cuda::CudaTables* tables = &session->tables;

  report::Progress progress;
  checks::CheckSettings settings;
  settings.verify_hashes = options.verify_hashes;
  settings.gpu = *gpu_target;
  settings.on_file = [&](size_t done, size_t total) { progress.update("checking loads", done, total); };
  settings.on_hash = [&](size_t done, size_t total) { progress.update("hashing files", done, total); };
  bool simulating = !options.without.empty() || !options.with.empty();
  checks::LoadMemo memo;
  if (simulating) settings.memo = &memo;
  checks::CheckRun run = checks::run_checks(*env, *knowledge, *tables, settings);

  if (simulating) {
    // The environment as pip would leave it, checked the same way; what the change brings is new.
    checks::Changes changes{options.without, options.with, options.verify_hashes};
    std::vector<checks::Finding> change_findings;
    std::set<std::string> before = checks::distribution_identities(*env);
    if (!checks::apply_changes(*env, changes, &change_findings, &error)) return tool_failure(error);
    checks::note_changes(*env, before, memo);
    checks::CheckRun after = checks::run_checks(*env, *knowledge, *tables, settings);
    after.findings.insert(after.findings.end(), change_findings.begin(), change_findings.end());
    checks::mark_new(run.findings, after.findings);
    checks::sort_and_dedupe(after.findings);
    run = std::move(after);
  }

  progress.finish();
  report::Report r;
  r.python = env->python.executable;
  r.version = env->python.version_info.full_str();
  r.site_packages = env->inventory.site_dirs;
  r.packages = env->inventory.distributions.size();
  r.elf_files = env->elf_files.size();
  r.findings = std::move(run.findings);
  r.notes = std::move(run.notes);
  if (options.json) {
    std::cout << report::render_json(r);
  } else {
    report::TextOptions text;
    text.color = use_color();
    std::cout << report::render_text(r, text);
  }
  std::cout.flush();
  // Under simulation only the errors the change introduces decide the status.
  size_t deciding = 0;
  for (const checks::Finding& f : r.findings)
    deciding += f.severity == checks::Severity::kError && (!simulating || f.is_new);
  return deciding ? 1 : 0;
}

}  // namespace envdoctor::cli
