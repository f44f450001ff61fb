// `envdoctor check`: the whole pipeline on one Python environment.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "checks/run.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/file_view.h"
#include "environment/knowledge.h"
#include "python/wheel.h"
#include "report/machine.h"
#include "report/progress.h"
#include "report/report.h"
#include "scenarios/fix_trial.h"
#include "scenarios/simulation.h"
#include "snapshot/snapshot.h"

namespace envdoctor::cli {

using environment::open_session;
using environment::Session;

namespace {

// `text` into `path` through a temporary file in the same directory and rename(2), so that a
// reader (node_exporter's textfile collector) sees the old file or the new one, never half.
bool write_atomically(const std::string& path, const std::string& text, std::string* error) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      *error = "cannot write " + tmp;
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// One environment checked and rendered in `format` into `out`: 0 or 1 as the exit status says, 2
// when it could not be examined (said on stderr). `others` (may be null) receives the prefixes of
// the other environments of its root or image.
int check_environment(const CheckOptions& options, const EnvironmentRequest& request,
                      const checks::CudaTarget& gpu_target, const std::string& format,
                      std::chrono::steady_clock::time_point started, std::string& out,
                      std::vector<std::string>* others) {
  std::string error;
  std::optional<Session> session = open_session(request);
  if (!session) return 2;
  const environment::Environment* env = session->env.get();
  std::unique_ptr<const environment::Environment> changed_env;  // --with/--without: the overlay checked
  const environment::Knowledge* knowledge = &session->knowledge;
  const cuda::CudaTables* tables = &session->tables;
  if (others)
    for (const python::OtherEnvironment& other : env->other_environments)
      if (other.problem.empty()) others->push_back(other.prefix);  // one that cannot be read is in the note

  report::Progress progress;
  checks::CheckSettings settings;
  settings.verify_hashes = options.verify_hashes;
  settings.all_files = options.all_files;
  settings.gpu = gpu_target;
  settings.on_file = [&](size_t done, size_t total) { progress.update("checking loads", done, total); };
  settings.on_hash = [&](size_t done, size_t total) { progress.update("hashing files", done, total); };
  settings.edges = format == "prom";  // the digest is a snapshot's
  bool simulating = !options.without.empty() || !options.with.empty();
  checks::CheckRun run;
  std::optional<scenarios::ChangeSummary> change;
  if (simulating) {
    scenarios::Changes changes{options.without, options.with, options.verify_hashes, {}, {}};
    scenarios::ChangeSummary summary;
    std::optional<scenarios::ChangedRun> changed =
        scenarios::check_change(*env, *knowledge, *tables, settings, changes, &error, &summary);
    if (!changed) return tool_failure(error);
    run = std::move(changed->run);
    changed_env = std::move(changed->env);
    env = changed_env.get();
    change = std::move(summary);
  } else {
    run = checks::run_checks({*env, *knowledge, *tables, settings});
    // Every command offered is tried on the model first: none that harms is printed.
    scenarios::try_fixes(*env, *knowledge, *tables, settings, scenarios::reopen_request(request), run);
  }

  progress.finish();
  // The digest of what was checked, for node_exporter: a fleet's nodes group by it.
  std::string digest = format == "prom" ? snapshot::take(*env, run, gpu_target)["digest"].get<std::string>() : "";
  report::Report r = report::environment_report(*env, std::move(run));
  r.change = std::move(change);
  r.gpu_node = gpu_target.driver.has_value();
  if (format == "json") {
    out = report::render_json(r);
  } else if (format == "nhc") {
    out = report::render_nhc(r);
  } else if (format == "prom") {
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
    out = report::render_prom(r, {seconds.count(), digest});
  } else {
    report::TextOptions text;
    text.color = options.output.empty() && use_color();
    text.only_errors = options.only_errors;
    text.width = options.output.empty() ? output_width() : report::kTextWidth;  // a file: the reports' own
    if (options.all) text.max_per_code = std::numeric_limits<size_t>::max();
    out = report::render_text(r, text);
  }
  // Under simulation only the errors the change introduces decide the status.
  if (simulating) return scenarios::new_errors(r.findings) ? 1 : 0;
  // nhc: 1 where its line is a drain reason (a silent fallback on a GPU node too: docs/fleet.md).
  if (format == "nhc") return report::nhc_status(r);
  return r.errors() ? 1 : 0;
}

// --all-environments: each other environment of the root or image checked after the first, the
// text reports one after another, the JSON documents in one array; the worst status. One that
// cannot be examined (said on stderr) makes it 2, and the others are still checked and printed.
int check_the_others(const CheckOptions& options, const EnvironmentRequest& request,
                     const checks::CudaTarget& gpu_target, const std::string& format,
                     std::chrono::steady_clock::time_point started, const std::vector<std::string>& others,
                     std::string& out, int status) {
  std::string all = format == "json" ? "[" + out : out;
  for (const std::string& prefix : others) {
    EnvironmentRequest other = request;
    other.python.clear();
    other.prefix = prefix;
    other.no_exec = true;
    std::string one;
    int s = check_environment(options, other, gpu_target, format, started, one, nullptr);
    status = std::max(status, s);
    if (s != 2) all += (format == "json" ? "," : "\n") + one;
  }
  out = format == "json" ? all + "]\n" : all;
  return status;
}

}  // namespace

int run_check(const CheckOptions& options) {
  auto started = std::chrono::steady_clock::now();
  const std::string format = !options.format.empty() ? options.format : options.json ? "json" : "text";
  std::string error;
  std::optional<checks::CudaTarget> gpu_target = cuda_target(options.gpus, options.driver, options.node);
  if (!gpu_target) return 2;
  if (options.verify_hashes && !environment::sha256_available(&error)) return tool_failure(error);
  if (options.verify_hashes && !options.loader.image.empty())
    return tool_failure(
        "--verify-hashes needs every file's bytes, and --image keeps only those loading reads "
        "(ELF files, package records): check the unpacked root with --root DIR instead");
  if (options.all_environments && options.loader.root.empty() && options.loader.image.empty())
    return tool_failure(
        "--all-environments checks the environments of a root or image: give --root DIR or --image REF");
  if (options.all_environments &&
      (!options.with.empty() || !options.without.empty() || format == "nhc" || format == "prom"))
    return tool_failure("--all-environments goes with the text and JSON reports, without --with and --without");
  for (const std::string& wheel : options.with)
    if (!python::wheel_file_exists(wheel, &error)) return tool_failure("--with " + error);
  EnvironmentRequest request{options.python, options.prefix, options.no_exec, for_target(options.loader, *gpu_target)};
  std::string out;
  std::vector<std::string> others;
  int status = check_environment(options, request, *gpu_target, format, started, out, &others);
  if (status == 2) return 2;
  if (options.all_environments)
    status = check_the_others(options, request, *gpu_target, format, started, others, out, status);
  if (!options.output.empty()) {
    if (!write_atomically(options.output, out, &error)) return tool_failure(error);
  } else {
    std::cout << out;
    std::cout.flush();
  }
  return status;
}

}  // namespace envdoctor::cli
