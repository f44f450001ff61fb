// `envdoctor snapshot` and `envdoctor diff`: the pipeline of `check`, run once, kept as a
// snapshot (src/snapshot) and rendered (src/report/machine.h).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "checks/run.h"
#include "cli/commands.h"
#include "cli/session.h"
#include "environment/file_view.h"
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
  if (!environment::sha256_available(&error)) {
    tool_failure(error);
    return std::nullopt;
  }
  EnvironmentRequest request{options.python, options.prefix, options.no_exec, options.loader, options.node};
  request.keep_until_exit = true;
  std::optional<Session> session = environment::open_session(request, &error);
  if (!session) {
    tool_failure(error);
    return std::nullopt;
  }
  checks::CheckSettings settings;
  settings.gpu = session->node;
  checks::CheckRun run = checks::run_checks({*session->env, session->knowledge, session->tables, settings});
  return snapshot::take(*session->env, run, session->node);
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
  // The saved side first: "-" is the environment it was taken of, now, unless --python or
  // --prefix names another (a venv's snapshot against the default python compared two environments).
  const std::string& saved = a == "-" ? b : a;
  std::optional<json> saved_snapshot = load(options, saved);
  if (!saved_snapshot) return 2;
  CheckOptions now = options;
  if ((a == "-" || b == "-") && options.python.empty() && options.prefix.empty()) {
    snapshot::Side side = snapshot::side_of(*saved_snapshot);
    if (side.python.empty() && side.prefix.empty())
      return tool_failure("diff: " + saved + " names no environment: give --python or --prefix for -");
    std::error_code ec;
    std::string path = side.python.empty() ? side.prefix : side.python;
    if (options.loader.root.empty() && !std::filesystem::exists(path, ec))
      return tool_failure("diff: " + saved + " is a snapshot of " + path +
                          ", which is not on this machine: give --python or --prefix for -");
    if (side.python.empty()) now.prefix = side.prefix;
    else now.python = side.python;
  }
  std::optional<json> current = a == "-" || b == "-" ? snapshot_now(now) : load(options, b == saved ? a : b);
  if (!current) return 2;
  const json& before = a == saved ? *saved_snapshot : *current;
  const json& after = a == saved ? *current : *saved_snapshot;
  snapshot::Diff d = snapshot::diff(before, after);
  d.a.source = a;
  d.b.source = b;
  std::cout << (json_output ? report::render_diff_json(d) : report::render_diff_text(d));
  std::cout.flush();
  return d.new_errors ? 1 : 0;
}

}  // namespace envdoctor::cli
