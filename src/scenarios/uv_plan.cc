#include "scenarios/uv_plan.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "python/laid_out.h"
#include "python/metadata_file.h"
#include "python/pip.h"
#include "python/uv.h"
#include "python/version.h"
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

std::string env_var(const char* name) {
  const char* value = ::getenv(name);
  return value ? value : "";
}

std::string program_on_path(const std::string& name) { return support::find_program(name).value_or(""); }

// The wheel file a requirement names ("./x.whl", "file:///w/x.whl", "x @ file:///w/x.whl"), or ""
// when it names none on this disk.
std::string wheel_file(const std::string& requirement) {
  std::string spec = requirement;
  if (size_t at = spec.find(" @ "); at != std::string::npos) spec = spec.substr(at + 3);
  if (!spec.ends_with(".whl")) return "";
  if (std::optional<std::string> local = python::file_url_path(spec)) spec = *local;
  std::string error;
  return python::wheel_file_exists(spec, &error) ? fs::absolute(spec).lexically_normal().string() : "";
}

// Whether a requirement of a wheel is met without installing anything else: by a wheel given
// beside it, or by an installed distribution whose version satisfies it.
bool requirement_met(const Environment& env, const python::Requirement& req,
                     const std::map<std::string, std::string>& given) {
  std::string key = python::normalize_name(req.name);
  if (given.count(key)) return true;
  const python::Distribution* installed = env.inventory.find(req.name);
  if (!installed) return false;
  std::optional<std::vector<python::SpecifierClause>> clauses = python::parse_specifier(req.specifier);
  if (!clauses) return false;
  for (const python::SpecifierClause& clause : *clauses)
    if (!python::satisfies(installed->version, clause)) return false;
  return true;
}

// The plan of wheel files alone, without uv, when nothing else needs resolving: nullopt when a
// requirement of one of them is not met (then uv resolves). `given`: normalized name -> wheel.
std::optional<PipPlan> plan_wheel_files(const Environment& env, const std::map<std::string, std::string>& given,
                                        bool no_deps, std::string* error) {
  PipPlan plan;
  plan.installer = "uv";
  plan.action = "install";
  for (const auto& [key, path] : given) {
    std::unique_ptr<python::Wheel> wheel = python::Wheel::open(path, error);
    if (!wheel) return std::nullopt;
    const python::Distribution& metadata = wheel->metadata();
    if (!no_deps)
      for (const python::Requirement& req : metadata.requirements_for(env.python.markers))
        if (!requirement_met(env, req, given)) return std::nullopt;
    PipItem item{metadata.name, metadata.version, path, python::file_url(path), "", true};
    if (const python::Distribution* old = env.inventory.find(metadata.name)) {
      plan.remove.push_back({old->name, old->version, "", "", ""});
      item.replaces = old->version;
    }
    plan.install.push_back(std::move(item));
  }
  return plan;
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

// The dry run's plan made into items: wheel files given read in place, the rest laid out.
void add_planned(const Environment& env, const python::UvDryRun& dry_run,
                 const std::map<std::string, std::string>& given, const std::vector<std::string>& index,
                 PipPlan& plan) {
  for (const python::UvPlanLine& line : dry_run.lines) {
    const python::Distribution* old = env.inventory.find(line.name);
    if (line.change != '+' && old) plan.remove.push_back({old->name, old->version, "", "", ""});
    if (line.change == '-') continue;
    PipItem item{line.name, line.version, "", line.url, old ? old->version : "", !line.url.empty()};
    if (auto it = given.find(python::normalize_name(line.name)); it != given.end()) {
      item.wheel = it->second;
      item.url = python::file_url(it->second);
      item.direct = true;
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
  python::UvDiscoveryContext context;
  context.virtual_env = env_var("VIRTUAL_ENV");
  context.conda_prefix = env_var("CONDA_PREFIX");
  context.uv_python = env_var("UV_PYTHON");
  std::string system = env_var("UV_SYSTEM_PYTHON");
  context.uv_system_python = system == "1" || system == "true";
  std::error_code ec;
  context.cwd = fs::current_path(ec).string();
  context.find_program = program_on_path;
  return python::uv_environment_python(python::uv_target_options(args), context, error);
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
    *error =
        "uv is not on PATH: envdoctor uv pip runs uv itself, for its plan and then for your command; nothing "
        "was changed";
    return false;
  }
  return true;
}

std::optional<PipPlan> plan_uv_uninstall(const Environment& env, const std::vector<std::string>& args,
                                         std::string* error) {
  std::optional<std::vector<std::string>> names = python::uv_uninstall_names(args, error);
  if (!names) return std::nullopt;
  return uninstall_plan(env, "uv", *names);
}

std::optional<PipPlan> plan_uv_install(const Environment& env, const std::vector<std::string>& args,
                                       std::string* error) {
  python::UvInstallRequests requests = python::uv_install_requests(args);
  std::map<std::string, std::string> given;  // normalized name -> a wheel file on the command line
  bool only_wheels = !requests.from_files && !requests.requirements.empty();
  for (const std::string& requirement : requests.requirements) {
    std::string path = wheel_file(requirement);
    std::string name_error;
    std::optional<python::WheelName> name =
        path.empty() ? std::nullopt : python::WheelName::parse(fs::path(path).filename().string(), &name_error);
    if (name) given[python::normalize_name(name->project())] = path;
    else only_wheels = false;
  }
  if (only_wheels)
    if (std::optional<PipPlan> plan = plan_wheel_files(env, given, requests.no_deps, error)) return plan;

  std::vector<std::string> argv = {program_on_path("uv"), "pip",  "install", "--dry-run", "--color", "never",
                                   "--only-binary",       ":all:"};
  // The user's own --dry-run and --color are ours already: clap refuses a flag given twice.
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i] == "--dry-run" || args[i].rfind("--color=", 0) == 0) continue;
    if (args[i] == "--color") {
      i++;
      continue;
    }
    argv.push_back(args[i]);
  }
  std::optional<support::ProcessResult> r = support::run_process(argv, kUvTimeout, kMaxUvOutput, error);
  if (!r) return std::nullopt;
  PipPlan plan;
  plan.installer = "uv";
  plan.action = "install";
  if (r->status != 0) {
    plan.cannot_check = support::trimmed(r->err);
    plan.dry_run_status = r->status;
    return plan;
  }
  std::optional<python::UvDryRun> dry_run = python::parse_uv_dry_run(r->err + "\n" + r->out, error);
  if (!dry_run) return std::nullopt;
  plan.scratch = support::ScratchDir::create("envdoctor-uv-", error);
  if (!plan.scratch) return std::nullopt;
  add_planned(env, *dry_run, given, python::uv_index_options(args), plan);
  return plan;
}

std::optional<PipCheck> check_uv_change(Environment& env, const Knowledge& knowledge, const cuda::CudaTables& tables,
                                        CheckSettings settings, const std::string& action,
                                        const std::vector<std::string>& args, std::string* error) {
  // What makes asking uv pointless is said before any work starts.
  if (!uv_can_plan(args, error)) return std::nullopt;
  return check_planned_change(
      env, knowledge, tables, std::move(settings),
      [&](std::string* plan_error) {
        return action == "install" ? plan_uv_install(env, args, plan_error) : plan_uv_uninstall(env, args, plan_error);
      },
      error);
}

std::vector<std::string> uv_command(const std::string& action, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {program_on_path("uv"), "pip", action};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace envdoctor::scenarios
