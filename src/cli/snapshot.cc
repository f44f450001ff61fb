// `envdoctor snapshot` and `envdoctor diff`: the pipeline of `check`, run once, kept as a
// snapshot (src/snapshot) and rendered (src/report/machine.h).
#include <fstream>
#include <iostream>
#include <sstream>

#include "checks/file_view.h"
#include "checks/run.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "report/machine.h"
#include "snapshot/diff.h"
#include "snapshot/snapshot.h"

namespace envdoctor::cli {

namespace {

using nlohmann::json;

// The environment of `options` checked as `check` checks it, taken as a snapshot. nullopt after
// saying why on stderr (exit status 2).
std::optional<json> snapshot_now(const CheckOptions& options) {
  std::string error;
  std::optional<checks::CudaTarget> target = checks::resolve_cuda_target(options.gpus, options.driver, &error);
  if (!target || !checks::sha256_available(&error)) {
    tool_failure(error);
    return std::nullopt;
  }
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return std::nullopt;
  checks::CheckSettings settings;
  settings.gpu = *target;
  checks::CheckRun run = checks::run_checks(*session->env, session->knowledge, session->tables, settings);
  return snapshot::take(*session->env, run, *target);
}

// A snapshot file, or this environment now for "-"; nullopt after saying why.
std::optional<json> load(const CheckOptions& options, const std::string& source) {
  if (source == "-") return snapshot_now(options);
  std::ifstream in(source, std::ios::binary);
  if (!in) {
    tool_failure(source + ": cannot read");
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  std::optional<json> s = snapshot::parse(text.str(), &error);
  if (!s) tool_failure(source + ": " + error);
  return s;
}

}  // namespace

int run_snapshot(const CheckOptions& options, bool digest_only) {
  std::optional<json> s = snapshot_now(options);
  if (!s) return 2;
  std::cout << (digest_only ? (*s)["digest"].get<std::string>() + "\n" : report::render_snapshot(*s));
  std::cout.flush();
  return 0;
}

int run_diff(const CheckOptions& options, const std::string& a, const std::string& b, bool json_output) {
  if (a == "-" && b == "-") return tool_failure("diff: at most one side can be this environment (-)");
  std::optional<json> before = load(options, a);
  if (!before) return 2;
  std::optional<json> after = load(options, b);
  if (!after) return 2;
  snapshot::Diff d = snapshot::diff(*before, *after);
  std::cout << (json_output ? report::render_diff_json(d) : report::render_diff_text(d));
  std::cout.flush();
  return d.new_errors ? 1 : 0;
}

}  // namespace envdoctor::cli
