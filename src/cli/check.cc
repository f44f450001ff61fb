// `envdoctor check`: the whole pipeline on one Python environment.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "checks/environment.h"
#include "checks/knowledge.h"
#include "checks/run.h"
#include "checks/simulation.h"
#include "cli/commands.h"
#include "cuda/tables.h"
#include "report/report.h"

namespace envdoctor::cli {

namespace {

namespace fs = std::filesystem;

bool use_color(bool json) {
  if (json || !::isatty(STDOUT_FILENO) || std::getenv("NO_COLOR")) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

// --root DIR made absolute and normal, without a trailing slash ("" for "/": this machine's own).
std::string normal_root(const std::string& root) {
  std::error_code ec;
  std::string out = fs::absolute(root, ec).lexically_normal().string();
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

// --prefix under --root: the container's own path; a path on this machine below the root is
// taken as the path inside it (as ldd --root takes its files).
std::string prefix_in_root(const std::string& root, const std::string& prefix) {
  if (prefix.size() > root.size() && prefix.compare(0, root.size(), root) == 0 && prefix[root.size()] == '/')
    return prefix.substr(root.size());
  return prefix;
}

}  // namespace

int run_check(const CheckOptions& options) {
  std::string root;
  if (!options.loader.root.empty()) {
    std::error_code ec;
    root = normal_root(options.loader.root);
    if (!fs::is_directory(options.loader.root, ec)) {
      std::cerr << "envdoctor: --root " << options.loader.root << ": not a directory\n";
      return 2;
    }
    if (options.prefix.empty()) {
      std::cerr << "envdoctor: check --root needs --prefix DIR, the environment's path inside the root "
                   "(a container's interpreter cannot be run here)\n";
      return 2;
    }
    if (!options.python.empty()) {
      std::cerr << "envdoctor: check --root reads the environment without running it: use --prefix, not --python\n";
      return 2;
    }
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
  env_options.prefix = root.empty() ? options.prefix : prefix_in_root(root, options.prefix);
  env_options.root = root;
  env_options.ld_library_path = options.loader.ld_library_path;
  // This machine's $LD_LIBRARY_PATH is not the container's: under --root only --ld-library-path
  // counts. (main.cc folds the variable into the option; a flag equal to it is dropped too.)
  const char* host_llp = std::getenv("LD_LIBRARY_PATH");
  if (!root.empty() && host_llp && env_options.ld_library_path == std::string(host_llp))
    env_options.ld_library_path = std::string();
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

  checks::CheckSettings settings;
  settings.verify_hashes = options.verify_hashes;
  settings.gpu = *gpu_target;
  checks::CheckRun run = checks::run_checks(*env, *knowledge, *tables, settings);

  bool simulating = !options.without.empty() || !options.with.empty();
  if (simulating) {
    // The environment as pip would leave it, checked the same way; what the change brings is new.
    checks::Changes changes{options.without, options.with, options.verify_hashes};
    std::vector<checks::Finding> change_findings;
    if (!checks::apply_changes(*env, changes, &change_findings, &error)) {
      std::cerr << "envdoctor: " << error << "\n";
      return 2;
    }
    checks::CheckRun after = checks::run_checks(*env, *knowledge, *tables, settings);
    after.findings.insert(after.findings.end(), change_findings.begin(), change_findings.end());
    checks::mark_new(run.findings, after.findings);
    checks::sort_and_dedupe(after.findings);
    run = std::move(after);
  }

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
    text.color = use_color(false);
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
