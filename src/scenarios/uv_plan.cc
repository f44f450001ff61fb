#include "scenarios/uv_plan.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <set>

#include "python/laid_out.h"
#include "python/metadata_file.h"
#include "python/pip.h"
#include "python/uv.h"
#include "python/wheel.h"
#include "support/subprocess.h"
#include "support/text.h"

namespace envdoctor::scenarios {

using checks::CheckSettings;

using environment::Environment;
using environment::Knowledge;

namespace fs = std::filesystem;

namespace {

// uv resolves and lays out: minutes on a slow index, never forever.
constexpr std::chrono::minutes kUvTimeout{30};
constexpr u64 kMaxUvOutput = u64{256} << 20;

constexpr const char* kNoUv =
    "uv is not on PATH: envdoctor uv pip runs uv itself, for its plan and then for your command; nothing was "
    "changed";

// What uv said when it failed, without its verbose lines: its error and the causes below it.
std::string uv_error(const std::string& err) {
  std::string out;
  size_t pos = 0;
  while (pos < err.size()) {
    size_t nl = err.find('\n', pos);
    std::string line = err.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? err.size() : nl + 1;
    if (line.rfind("DEBUG ", 0) == 0 || line.rfind("TRACE ", 0) == 0 ||
        line.rfind("warning: Requirements file", 0) == 0)
      continue;
    out += (out.empty() ? "" : "\n") + line;
  }
  return support::trimmed(out);
}

std::string program_on_path(const std::string& name) { return support::find_program(name).value_or(""); }

// The wheel file on this disk that a planned distribution's URL names (" + leaf @
// file:///w/leaf-1.0-py3-none-any.whl"), or "" when it names none.
std::string local_wheel(const std::string& url) {
  std::optional<std::string> path = python::file_url_path(url);
  std::string error;
  if (!path || !path->ends_with(".whl") || !python::wheel_file_exists(*path, &error)) return "";
  return fs::path(*path).lexically_normal().string();
}

// `uv pip install --target DIR --no-deps SPEC` for one planned distribution: the directory it
// was laid out in, or "" with `why` set.
std::string lay_out(const Environment& env, const python::UvPlanLine& line, const std::vector<std::string>& index,
                    const support::ScratchDir& scratch, std::string* why) {
  fs::path dir = scratch.path() / python::normalize_name(line.name);
  std::string spec = line.url.empty() ? line.name + "==" + line.version : line.name + " @ " + line.url;
  std::vector<std::string> argv = {program_on_path("uv"), "pip",       "install",  "--target",
                                   dir.string(),          "--no-deps", "--color",  "never",
                                   "--only-binary",       ":all:",     "--python", env.python.executable};
  argv.insert(argv.end(), index.begin(), index.end());
  argv.push_back(spec);
  std::string error;
  std::optional<support::ProcessResult> r = support::run_process(argv, kUvTimeout, kMaxUvOutput, &error);
  if (!r || r->status != 0) {
    *why = "uv could not lay out " + spec + ": " + (r ? support::trimmed(r->err) : error);
    return "";
  }
  return dir.string();
}

// `uv pip ACTION --dry-run ARGS`: uv's own plan. An empty one, with `plan.cannot_check` in uv's
// words and `plan.dry_run_status` its status, when uv cannot plan the change (a requirement that
// does not exist, a file it cannot read); nullopt with `error` when uv cannot be run or prints no
// plan envdoctor can read.
std::optional<python::UvDryRun> dry_run(python::PipAction action, const std::vector<std::string>& args,
                                        const std::vector<std::string>& extra, PipPlan& plan, std::string* error) {
  std::vector<std::string> argv = {program_on_path("uv"), "pip",     python::pip_action_name(action),
                                   "--dry-run",           "--color", "never"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (std::string& a : python::uv_dry_run_args(args)) argv.push_back(std::move(a));
  std::optional<support::ProcessResult> r = support::run_process(argv, kUvTimeout, kMaxUvOutput, error);
  if (!r) return std::nullopt;
  if (r->status != 0) {
    plan.cannot_check = uv_error(r->err);
    plan.dry_run_status = r->status;
    return python::UvDryRun{};
  }
  return python::parse_uv_dry_run(r->err + "\n" + r->out, error);
}

// The names of an uninstall that are not installed, as uv's warnings name them: normalized,
// sorted, each once. Only names uv could match (a path or URL is matched by its origin).
std::vector<std::string> skipped_names(const Environment& env, const std::vector<std::string>& args) {
  std::string error;
  std::set<std::string> out;
  for (const std::string& name : python::uv_uninstall_names(args, &error).value_or(std::vector<std::string>{}))
    if (std::isalnum(static_cast<unsigned char>(name.front())) && !env.inventory.find(name))
      out.insert(python::normalize_name(name));
  return {out.begin(), out.end()};
}

// The dry run's plan made into items: each planned wheel file on this disk read in place, every
// other distribution laid out by uv.
void add_planned(const Environment& env, const python::UvDryRun& planned, const std::vector<std::string>& index,
                 PipPlan& plan) {
  for (const python::UvPlanLine& line : planned.lines) {
    const python::Distribution* old = env.inventory.find(line.name);
    if (line.change != '+' && old) plan.remove.push_back({old->name, old->version, "", "", ""});
    if (line.change == '-') continue;
    PipItem item{line.name, line.version, local_wheel(line.url), line.url, old ? old->version : "", !line.url.empty()};
    if (!item.wheel.empty()) {
      // A direct reference's line has no version: the file's name has it.
      std::string error;
      if (auto name = python::WheelName::parse(fs::path(item.wheel).filename().string(), &error))
        item.version = name->version;
    } else {
      item.wheel = lay_out(env, line, index, *plan.scratch, &plan.cannot_check);
      if (item.wheel.empty()) return;
      std::string error;
      std::optional<python::LaidOutDistribution> laid_out = python::LaidOutDistribution::open(item.wheel, &error);
      if (!laid_out) {
        plan.cannot_check = "uv laid out " + line.name + " without its metadata: " + error;
        return;
      }
      item.name = laid_out->metadata().name;
      item.version = laid_out->metadata().version;
      item.laid_out = true;
    }
    plan.install.push_back(std::move(item));
  }
}

}  // namespace

std::optional<std::string> uv_python(const std::vector<std::string>& args, std::string* error) {
  std::string uv = program_on_path("uv");
  if (uv.empty()) {
    *error = kNoUv;
    return std::nullopt;
  }
  // uv's own discovery, as the user's command would run it: an uninstall that reads nothing and
  // changes nothing, verbose so that uv names the environment even where it keeps quiet about it
  // (the .venv of the current directory).
  std::vector<std::string> argv = {uv,        "pip",   "uninstall", "--dry-run", "--verbose",
                                   "--color", "never", "-r",        "/dev/null"};
  for (std::string& a : python::uv_discovery_options(args)) argv.push_back(std::move(a));
  std::optional<support::ProcessResult> r = support::run_process(argv, kUvTimeout, kMaxUvOutput, error);
  if (!r) return std::nullopt;
  if (r->status != 0) {
    // envdoctor's own "envdoctor: " stands where uv's "error: " was.
    *error = uv_error(r->err);
    if (error->rfind("error: ", 0) == 0) error->erase(0, 7);
    return std::nullopt;
  }
  // uv names the environment relative to the directory it runs in: --directory, else ours.
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (std::string dir = python::uv_target_options(args).directory; !dir.empty()) cwd = (cwd / dir).lexically_normal();
  return python::parse_uv_environment(r->err, cwd.string(), error);
}

bool uv_can_plan(const std::vector<std::string>& args, std::string* error) {
  python::UvTargetOptions target = python::uv_target_options(args);
  for (const auto& [option, dir] : {std::pair{"--target", target.target}, std::pair{"--prefix", target.prefix}}) {
    if (dir.empty()) continue;
    *error = std::string("envdoctor uv pip checks an environment itself; uv's ") + option + " " + dir +
             " installs into another directory, which it does not model: run uv without envdoctor, or name that "
             "environment with --python";
    return false;
  }
  if (!support::find_program("uv")) {
    *error = kNoUv;
    return false;
  }
  return true;
}

std::optional<PipPlan> plan_uv_uninstall(const Environment& env, const std::vector<std::string>& args,
                                         std::string* error) {
  PipPlan plan;
  plan.installer = Installer::kUv;
  plan.action = python::PipAction::kUninstall;
  std::optional<python::UvDryRun> planned = dry_run(plan.action, args, {}, plan, error);
  if (!planned) return std::nullopt;
  if (!plan.cannot_check.empty()) return plan;
  for (const python::UvPlanLine& line : planned->lines) {
    if (line.change != '-') continue;
    const python::Distribution* dist = env.inventory.find(line.name);
    if (!dist) {
      plan.cannot_check = "uv would remove " + line.name + " " + line.version +
                          ", which envdoctor finds in no site directory of " + env.python.prefix;
      return plan;
    }
    plan.remove.push_back({dist->name, dist->version, "", "", ""});
  }
  plan.not_installed = skipped_names(env, args);
  return plan;
}

std::optional<PipPlan> plan_uv_install(const Environment& env, const std::vector<std::string>& args,
                                       std::string* error) {
  PipPlan plan;
  plan.installer = Installer::kUv;
  plan.action = python::PipAction::kInstall;
  std::optional<python::UvDryRun> planned = dry_run(plan.action, args, {"--only-binary", ":all:"}, plan, error);
  if (!planned) return std::nullopt;
  if (!plan.cannot_check.empty()) return plan;
  plan.scratch = support::ScratchDir::create("envdoctor-uv-", error);
  if (!plan.scratch) return std::nullopt;
  add_planned(env, *planned, python::uv_index_options(args), plan);
  return plan;
}

std::optional<PipCheck> check_uv_change(const Environment& env, const Knowledge& knowledge,
                                        const cuda::CudaTables& tables, CheckSettings settings,
                                        python::PipAction action, const std::vector<std::string>& args,
                                        std::string* error) {
  // What makes asking uv pointless is said before any work starts.
  if (!uv_can_plan(args, error)) return std::nullopt;
  return check_planned_change(
      env, knowledge, tables, std::move(settings),
      [&](std::string* plan_error) {
        return action == python::PipAction::kInstall ? plan_uv_install(env, args, plan_error)
                                                     : plan_uv_uninstall(env, args, plan_error);
      },
      error);
}

std::vector<std::string> uv_command(python::PipAction action, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {program_on_path("uv"), "pip", python::pip_action_name(action)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace envdoctor::scenarios
