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

#include "cli/commands.h"
#include "cli/session.h"
#include "report/machine.h"
#include "report/progress.h"
#include "report/report.h"
#include "scenarios/commands.h"
#include "snapshot/snapshot.h"

namespace envdoctor::cli {

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

// The outcome of `check` rendered in the options' format.
std::string render(const CheckOptions& options, const report::Report& r, const std::string& digest,
                   std::chrono::steady_clock::time_point started) {
  switch (options.format) {
    case Format::kJson: return report::render_json(r);
    case Format::kNhc: return report::render_nhc(r);
    case Format::kProm: {
      std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
      return report::render_prom(r, {seconds.count(), digest});
    }
    case Format::kText: break;
  }
  report::TextOptions text;
  text.color = options.output.empty() && use_color();
  text.only_errors = options.only_errors;
  text.width = options.output.empty() ? output_width() : report::kTextWidth;  // a file: the reports' own
  if (options.all) text.max_per_code = std::numeric_limits<size_t>::max();
  return report::render_text(r, text);
}

// The other environments of a root or image, for --all-environments: the first one's request,
// with the node it read, and their prefixes.
struct OtherEnvironments {
  EnvironmentRequest first;
  std::vector<std::string> prefixes;
};

// One environment checked (scenarios::check) and rendered into `out`: 0 or 1 as the exit status
// says, 2 when it could not be examined (said on stderr). `others` (may be null) receives the
// other environments of its root or image.
int check_environment(const CheckOptions& options, const EnvironmentRequest& request,
                      std::chrono::steady_clock::time_point started, std::string& out, OtherEnvironments* others) {
  std::string error;
  std::optional<Session> session = environment::open_session(request, &error);
  if (!session) return tool_failure(error);
  if (others) {
    others->first = session->request;
    for (const python::OtherEnvironment& other : session->env->other_environments)
      if (other.problem.empty()) others->prefixes.push_back(other.prefix);  // one that cannot be read is in the note
  }

  report::Progress progress;
  scenarios::CheckRequest asked{.verify_hashes = options.verify_hashes,
                                .all_files = options.all_files,
                                .edges = options.format == Format::kProm,  // the digest is a snapshot's
                                .without = options.without,
                                .with = options.with};
  asked.on_file = [&](size_t done, size_t total) { progress.update("checking loads", done, total); };
  asked.on_hash = [&](size_t done, size_t total) { progress.update("hashing files", done, total); };
  std::optional<scenarios::CheckOutcome> checked = scenarios::check(*session, asked, &error);
  if (!checked) return tool_failure(error);
  progress.finish();
  const environment::Environment& env = checked->env(*session);
  // The digest of what was checked, for node_exporter: a fleet's nodes group by it.
  std::string digest = options.format == Format::kProm
                           ? snapshot::take(env, checked->run, session->node)["digest"].get<std::string>()
                           : "";
  report::Report r = report::environment_report(env, std::move(checked->run));
  r.change = std::move(checked->change);
  r.gpu_node = session->node.driver.has_value();
  out = render(options, r, digest, started);
  // Under simulation only the errors the change introduces decide the status.
  if (asked.simulating()) return scenarios::new_errors(r.findings) ? 1 : 0;
  // nhc: 1 where its line is a drain reason (a silent fallback on a GPU node too: docs/fleet.md).
  if (options.format == Format::kNhc) return report::nhc_status(r);
  return r.errors() ? 1 : 0;
}

// --all-environments: each other environment of the root or image checked after the first (on
// the node the first read), the text reports one after another, the JSON documents in one array;
// the worst status. One that cannot be examined (said on stderr) makes it 2, and the others are
// still checked and printed.
int check_the_others(const CheckOptions& options, const OtherEnvironments& others,
                     std::chrono::steady_clock::time_point started, std::string& out, int status) {
  bool json = options.format == Format::kJson;
  std::string all = json ? "[" + out : out;
  for (const std::string& prefix : others.prefixes) {
    EnvironmentRequest other = others.first;
    other.python.clear();
    other.prefix = prefix;
    other.no_exec = true;
    std::string one;
    int s = check_environment(options, other, started, one, nullptr);
    status = std::max(status, s);
    if (s != 2) all += (json ? "," : "\n") + one;
  }
  out = json ? all + "]\n" : all;
  return status;
}

// What check refuses before it opens anything.
std::string refusal(const CheckOptions& options) {
  if (options.verify_hashes && !options.loader.image.empty())
    return "--verify-hashes needs every file's bytes, and --image keeps only those loading reads "
           "(ELF files, package records): check the unpacked root with --root DIR instead";
  if (options.all_environments && options.loader.root.empty() && options.loader.image.empty())
    return "--all-environments checks the environments of a root or image: give --root DIR or --image REF";
  if (options.all_environments && (!options.with.empty() || !options.without.empty() ||
                                   options.format == Format::kNhc || options.format == Format::kProm))
    return "--all-environments goes with the text and JSON reports, without --with and --without";
  return "";
}

}  // namespace

int run_check(const CheckOptions& options) {
  auto started = std::chrono::steady_clock::now();
  std::string error;
  if (std::string why = refusal(options); !why.empty()) return tool_failure(why);
  scenarios::CheckRequest asked{
      .verify_hashes = options.verify_hashes, .without = options.without, .with = options.with};
  if (!scenarios::check_arguments_valid(asked, &error)) return tool_failure(error);
  EnvironmentRequest request{options.python, options.prefix, options.no_exec, options.loader, options.node};
  request.keep_until_exit = true;
  std::string out;
  OtherEnvironments others;
  int status = check_environment(options, request, started, out, &others);
  if (status == 2) return 2;
  if (options.all_environments) status = check_the_others(options, others, started, out, status);
  if (!options.output.empty()) {
    if (!write_atomically(options.output, out, &error)) return tool_failure(error);
  } else {
    std::cout << out;
    std::cout.flush();
  }
  return status;
}

}  // namespace envdoctor::cli
