#include "scenarios/pip_plan.h"

#include <chrono>
#include <filesystem>
#include <future>

#include "advice/install.h"
#include "environment/file_view.h"
#include "python/index_origins.h"
#include "python/metadata_file.h"
#include "python/pip.h"
#include "python/uv.h"
#include "python/version.h"
#include "support/subprocess.h"
#include "support/text.h"

namespace envdoctor::scenarios {

using checks::CheckSettings;
using checks::Finding;

using environment::Environment;
using environment::Knowledge;
using environment::sha256_file;

namespace fs = std::filesystem;

namespace {

// pip resolves and downloads: minutes on a slow index, never forever.
constexpr std::chrono::minutes kPipTimeout{30};
constexpr u64 kMaxPipOutput = u64{256} << 20;

// The first pip with `install --report` (pip 22.2, 2022-07); its report is version "1" from 23.0.
constexpr std::string_view kFirstPipWithReport = "22.2";

// Whether the environment has its own pip, which envdoctor pip runs: false with `error` when not.
bool has_pip(const Environment& env, std::string* error) {
  if (env.inventory.find("pip")) return true;
  *error = env.python.executable +
           " has no pip (No module named pip): envdoctor pip runs the environment's own pip; nothing was changed";
  return false;
}

// Whether the environment's own pip can report its plan: false with `error` when there is no pip
// or it is too old for `install --dry-run --report`.
bool pip_can_report(const Environment& env, std::string* error) {
  if (!has_pip(env, error)) return false;
  const python::Distribution* pip = env.inventory.find("pip");
  auto version = python::Version::parse(pip->version);
  auto first = python::Version::parse(kFirstPipWithReport);
  if (version && first && python::compare(*version, *first) < 0) {
    *error = "pip " + pip->version + " in " + env.python.prefix +
             " is too old: envdoctor pip needs `pip install --dry-run --report` (pip 22.2 and later); "
             "nothing was changed. Upgrade it first: " +
             env.python.executable + " -m pip install --upgrade pip";
    return false;
  }
  return true;
}

// The report's JSON in pip's stdout: all of it under --quiet, else after pip's own lines (the user
// gave -v), from the line that opens it.
std::string report_text(const std::string& out) {
  if (out.rfind("{", 0) == 0) return out;
  size_t at = out.find("\n{");
  return at == std::string::npos ? out : out.substr(at + 1);
}

// The wheel of `item`: in place for a file:// URL, else downloaded by pip into `downloads` and
// held to the report's sha256. "" with `why` set when there is none to read.
std::string fetch_wheel(const Environment& env, const python::ReportItem& item, const std::vector<std::string>& index,
                        const support::ScratchDir& downloads, std::string* why) {
  std::string label = item.name + " " + item.version;
  if (!item.archive || !item.url.ends_with(".whl")) {
    *why = label + " is not a wheel (" + item.url +
           "): its files are known only after it is built, and envdoctor runs no build";
    return "";
  }
  if (std::optional<std::string> local = python::file_url_path(item.url)) return *local;
  fs::path dir = downloads.path() / python::normalize_name(item.name);
  std::vector<std::string> argv = {
      env.python.executable,         "-m", "pip",       "download", "--no-deps", "--only-binary=:all:", "--quiet",
      "--disable-pip-version-check", "-d", dir.string()};
  argv.insert(argv.end(), index.begin(), index.end());
  argv.push_back(item.name + "==" + item.version);
  std::string error;
  std::optional<support::ProcessResult> r = support::run_process(argv, kPipTimeout, kMaxPipOutput, &error);
  if (!r || r->status != 0) {
    *why = "pip could not download the wheel of " + label + ": " + (r ? support::trimmed(r->err) : error);
    return "";
  }
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".whl") continue;
    std::optional<std::vector<u8>> digest = sha256_file(e.path().string());
    std::string got = digest ? support::hex(*digest) : "";
    if (!item.sha256.empty() && got != item.sha256) {
      *why = "the wheel pip downloaded for " + label + " (" + e.path().filename().string() + ") has sha256 " + got +
             ", its plan said " + item.sha256;
      return "";
    }
    return e.path().string();
  }
  *why = "pip downloaded no wheel for " + label;
  return "";
}

}  // namespace

Changes PipPlan::changes() const {
  Changes c;
  c.installer = installer;
  // pip's replacements are apply_changes's to make, wheel by wheel in pip's order; uv removes
  // every distribution it replaces before it installs any (operations.rs, execute_plan).
  if (action == python::PipAction::kUninstall || c.installer == Installer::kUv)
    for (const PipItem& r : remove) c.without.push_back(r.name);
  for (const PipItem& i : install) {
    if (i.laid_out) {
      c.laid_out.push_back(i.wheel);
      continue;
    }
    c.with.push_back(i.wheel);
    if (!i.direct) c.from_index.insert(i.wheel);
  }
  return c;
}

PipPlan uninstall_plan(const Environment& env, Installer installer, const std::vector<std::string>& names) {
  PipPlan plan;
  plan.installer = installer;
  plan.action = python::PipAction::kUninstall;
  for (const std::string& name : names) {
    if (const python::Distribution* d = env.inventory.find(name))
      plan.remove.push_back({d->name, d->version, "", "", ""});
    else plan.not_installed.push_back(name);
  }
  return plan;
}

PipVerdict pip_verdict(const PipPlan& plan, const std::vector<Finding>& findings) {
  if (!plan.cannot_check.empty()) return PipVerdict::kCannotCheck;
  return new_errors(findings) ? PipVerdict::kRefused : PipVerdict::kSafe;
}

const char* verdict_name(PipVerdict verdict) {
  switch (verdict) {
    case PipVerdict::kSafe: return "safe";
    case PipVerdict::kRefused: return "refused";
    case PipVerdict::kCannotCheck: return "cannot-check";
  }
  return "";
}

int status_without_pip(const PipPlan& plan) { return plan.dry_run_status ? plan.dry_run_status : 1; }

bool pip_can_plan(const Environment& env, python::PipAction action, const std::vector<std::string>& args,
                  std::string* error) {
  if (action != python::PipAction::kInstall) return has_pip(env, error);
  if (std::string option = python::unmodelled_option(args); !option.empty()) {
    *error = "envdoctor pip checks the environment itself; pip's " + option +
             " installs elsewhere, which it does not model: run pip without envdoctor, or name that environment "
             "with --python";
    return false;
  }
  return pip_can_report(env, error);
}

std::optional<PipPlan> plan_uninstall(const Environment& env, const std::vector<std::string>& args,
                                      std::string* error) {
  if (!pip_can_plan(env, python::PipAction::kUninstall, args, error)) return std::nullopt;
  std::optional<std::vector<std::string>> names = python::uninstall_names(args, error);
  if (!names) return std::nullopt;
  return uninstall_plan(env, Installer::kPip, *names);
}

namespace {

// The requirements of a failed dry run that no index or link offers at all. Asked with
// --only-binary=:all:, pip says "No matching distribution found for NAME" both for a project
// that has only source distributions and for one that does not exist; `pip index versions`,
// which reads the same indexes and links and builds nothing, tells them apart.
std::vector<std::string> offered_nowhere(const Environment& env, const std::vector<std::string>& args,
                                         const std::string& pip_error) {
  constexpr std::string_view kNotFound = "No matching distribution found for ";
  std::vector<std::string> out;
  std::vector<std::string> index = python::index_options(args);
  size_t at = 0;
  while ((at = pip_error.find(kNotFound, at)) != std::string::npos) {
    at += kNotFound.size();
    std::string requirement = pip_error.substr(at, pip_error.find('\n', at) - at);
    std::string name = requirement.substr(0, requirement.find_first_of("<>=!~;[ @("));
    if (name.empty()) continue;
    std::vector<std::string> argv = {env.python.executable,        "-m", "pip", "index", "versions", name,
                                     "--disable-pip-version-check"};
    argv.insert(argv.end(), index.begin(), index.end());
    std::string ignored;
    std::optional<support::ProcessResult> r = support::run_process(argv, kPipTimeout, kMaxPipOutput, &ignored);
    if (r && r->status != 0 && r->err.find(kNotFound) != std::string::npos) out.push_back(name);
  }
  return out;
}

}  // namespace

std::optional<PipPlan> plan_install(const Environment& env, const std::vector<std::string>& args, std::string* error) {
  if (!pip_can_plan(env, python::PipAction::kInstall, args, error)) return std::nullopt;
  std::vector<std::string> argv = {env.python.executable,
                                   "-m",
                                   "pip",
                                   "install",
                                   "--dry-run",
                                   "--quiet",
                                   "--report",
                                   "-",
                                   "--only-binary=:all:",
                                   "--disable-pip-version-check"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::optional<support::ProcessResult> r = support::run_process(argv, kPipTimeout, kMaxPipOutput, error);
  if (!r) return std::nullopt;
  PipPlan plan;
  plan.action = python::PipAction::kInstall;
  if (r->status != 0) {
    plan.cannot_check = support::trimmed(r->err);
    plan.dry_run_status = r->status;
    plan.not_found = offered_nowhere(env, args, r->err);
    return plan;
  }
  std::optional<std::vector<python::ReportItem>> items = python::parse_install_report(report_text(r->out), error);
  if (!items) return std::nullopt;
  plan.scratch = support::ScratchDir::create("envdoctor-pip-", error);
  if (!plan.scratch) return std::nullopt;
  std::vector<std::string> index = python::index_options(args);
  for (const python::ReportItem& item : *items) {
    std::string wheel = fetch_wheel(env, item, index, *plan.scratch, &plan.cannot_check);
    if (wheel.empty()) return plan;
    PipItem in{item.name, item.version, wheel, item.url, "", item.direct};
    if (const python::Distribution* old = env.inventory.find(item.name)) {
      plan.remove.push_back({old->name, old->version, "", "", ""});
      in.replaces = old->version;
    }
    plan.install.push_back(std::move(in));
  }
  return plan;
}

std::optional<PipCheck> check_planned_change(const Environment& env, const Knowledge& knowledge,
                                             const cuda::CudaTables& tables, CheckSettings settings,
                                             const Planner& plan, std::string* error) {
  // Both read `env` only, until the plan is known.
  std::string plan_error;
  std::future<std::optional<PipPlan>> planned = std::async(std::launch::async, [&] { return plan(&plan_error); });
  ChangeCheck change(env, knowledge, tables, std::move(settings));
  std::optional<PipPlan> made = planned.get();
  if (!made) {
    *error = plan_error;
    return std::nullopt;
  }
  PipCheck out;
  out.plan = std::move(*made);
  if (!out.plan.cannot_check.empty()) return out;
  out.prediction = change.after(env, out.plan.changes(), error);
  if (!out.prediction) return std::nullopt;
  out.verdict = pip_verdict(out.plan, out.prediction->run.findings);
  return out;
}

std::optional<PipCheck> check_pip_change(const Environment& env, const Knowledge& knowledge,
                                         const cuda::CudaTables& tables, CheckSettings settings,
                                         python::PipAction action, const std::vector<std::string>& args,
                                         std::string* error) {
  // What makes asking pip pointless is said before any work starts.
  if (!pip_can_plan(env, action, args, error)) return std::nullopt;
  return check_planned_change(
      env, knowledge, tables, std::move(settings),
      [&](std::string* plan_error) {
        return action == python::PipAction::kInstall ? plan_install(env, args, plan_error)
                                                     : plan_uninstall(env, args, plan_error);
      },
      error);
}

std::vector<std::string> pip_command(const Environment& env, python::PipAction action,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {env.python.executable, "-m", "pip", python::pip_action_name(action)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string uv_note(const Environment& env) {
  bool by_uv = false;
  for (const python::Distribution& d : env.inventory.distributions)
    by_uv |= d.tool() == python::Distribution::Tool::kUv;
  if (!by_uv || !support::find_program("uv")) return "";
  std::string note =
      "note: uv installed packages of this environment (their INSTALLER says uv), and uv is on PATH: a `uv pip` "
      "command is checked only when given as `envdoctor uv pip install|uninstall --python " +
      env.python.executable + " ...`";
  // uv makes its environments without pip (`uv venv`), and envdoctor pip runs the environment's own.
  if (!env.inventory.find("pip")) note += "; this environment has no pip, which envdoctor pip runs";
  return note;
}

bool remember_index_origins(const Environment& env, const PipPlan& plan, const std::vector<std::string>& args,
                            std::string* error) {
  if (plan.action != python::PipAction::kInstall || !env.root.empty()) return true;
  std::error_code ec;
  std::vector<std::string> options = python::recordable_index_options(args, fs::current_path(ec).string());
  if (options.empty()) return true;
  // The distributions as the installer left them: their new metadata directories.
  python::Inventory now = python::read_inventory(env.python);
  std::vector<const python::Distribution*> installed;
  for (const PipItem& item : plan.install) {
    if (item.direct) continue;  // pip's direct_url.json says where it came from
    const python::Distribution* d = now.find(item.name);
    if (d && d->version == item.version) installed.push_back(d);
  }
  return python::record_index_origins(installed, options, error);
}

void keep_user_index_options(const Environment& env, const std::vector<std::string>& args, bool uv,
                             std::vector<checks::Finding>& findings) {
  std::error_code ec;
  std::vector<std::string> options =
      uv ? python::uv_index_options(args) : python::recordable_index_options(args, fs::current_path(ec).string());
  if (options.empty()) return;
  std::string words;
  for (const std::string& o : options) words += " " + advice::shell_word(o);
  const std::string install = uv ? "uv pip install --python " + advice::shell_word(advice::environment_python(env))
                                 : advice::pip_for(env) + " install";
  for (checks::Finding& f : findings) {
    if (f.fix_command.empty()) continue;
    std::string out;
    size_t at = 0;
    // Each command of a chain "A && B" on its own.
    while (at <= f.fix_command.size()) {
      size_t end = f.fix_command.find(" && ", at);
      std::string part = f.fix_command.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (part.starts_with(install + " ") && part.find(words) == std::string::npos)
        part = install + words + part.substr(install.size());
      out += (out.empty() ? "" : " && ") + part;
      if (end == std::string::npos) break;
      at = end + 4;
    }
    f.fix_command = out;
  }
}

}  // namespace envdoctor::scenarios
