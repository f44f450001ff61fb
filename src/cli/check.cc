// `envdoctor check`: the whole pipeline on one Python environment.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "checks/cuda_checks.h"
#include "checks/environment.h"
#include "checks/knowledge.h"
#include "checks/library_checks.h"
#include "checks/load_checks.h"
#include "checks/record_checks.h"
#include "cli/commands.h"
#include "cuda/tables.h"
#include "report/report.h"

namespace envdoctor::cli {

namespace {

bool use_color(bool json) {
  if (json || !::isatty(STDOUT_FILENO) || std::getenv("NO_COLOR")) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

int run_check(const CheckOptions& options) {
  if (!options.loader.root.empty()) {
    std::cerr << "envdoctor: check --root is not supported yet; use ldd/tree --root for a container's files\n";
    return 2;
  }
  if (options.no_exec && options.prefix.empty()) {
    std::cerr << "envdoctor: --no-exec needs --prefix DIR (the environment to read without running it)\n";
    return 2;
  }
  std::string error;
  std::optional<checks::CudaTarget> gpu_target = checks::resolve_cuda_target(options.gpus, options.driver, &error);
  if (!gpu_target) {
    std::cerr << "envdoctor: " << error << "\n";
    return 2;
  }
  checks::EnvironmentOptions env_options;
  env_options.python = options.python;
  env_options.prefix = options.prefix;
  env_options.ld_library_path = options.loader.ld_library_path;
  std::unique_ptr<checks::Environment> env = checks::build_environment(env_options, &error);
  if (!env) {
    std::cerr << "envdoctor: " << error << "\n";
    return 2;
  }
  auto knowledge = checks::Knowledge::load(cuda::default_data_dir(), &error);
  auto tables = knowledge ? cuda::load_cuda_tables(cuda::default_data_dir(), &error) : std::nullopt;
  if (!knowledge || !tables) {
    std::cerr << "envdoctor: " << error << "\n";
    return 2;
  }

  std::vector<checks::Finding> findings = checks::check_records(*env, *knowledge, options.verify_hashes);
  checks::LoadCheckResult loads = checks::check_loads(*env, *knowledge);
  findings.insert(findings.end(), loads.findings.begin(), loads.findings.end());
  for (checks::Finding& f : checks::check_duplicate_libraries(*env, loads.resolutions)) findings.push_back(std::move(f));
  checks::CudaCheckResult gpu = checks::check_cuda(*env, checks::index_cuda(*env, *knowledge, loads.resolutions), *tables, *gpu_target);
  findings.insert(findings.end(), gpu.findings.begin(), gpu.findings.end());
  checks::sort_and_dedupe(findings);

  report::Report r;
  r.python = env->python.executable;
  r.version = env->python.version_info.full_str();
  r.site_packages = env->inventory.site_dirs;
  r.packages = env->inventory.distributions.size();
  r.elf_files = env->elf_files.size();
  r.findings = std::move(findings);
  for (const std::string& p : env->inventory.problems) r.notes.push_back(p);
  r.notes.insert(r.notes.end(), gpu.notes.begin(), gpu.notes.end());
  if (options.json) {
    std::cout << report::render_json(r);
  } else {
    report::TextOptions text;
    text.color = use_color(false);
    std::cout << report::render_text(r, text);
  }
  std::cout.flush();
  return r.errors() ? 1 : 0;
}

}  // namespace envdoctor::cli
