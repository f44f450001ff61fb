// `envdoctor pip`: pip's own plan for the user's command, as a change the simulation can check.
//
// install: pip is asked for its plan without changing anything (`EXE -m pip install --dry-run
// --quiet --report - --only-binary=:all: ARGS`, the environment's own pip); each wheel of the
// report is read in place when its URL is file://, else fetched by pip itself into a private
// directory (`pip download --no-deps --only-binary=:all: -d DIR NAME==VERSION` with the user's
// index options) and held to the report's sha256. An item whose project is installed replaces
// that distribution (apply_changes removes it first, as pip does, in the report's order).
// uninstall: the names as pip resolves them (requirements files read, PEP 503 matching).
//
// What is installed is taken from the environment's inventory, the one the simulation changes,
// rather than from `pip inspect`: both read the same .dist-info directories (tests/scenarios/pip_test.cc holds the
// two equal), and `pip inspect` costs a pip start and a parse of every METADATA, more than
// envdoctor's whole inventory (docs/pip.md has the figures).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "python/pip.h"
#include "scenarios/simulation.h"
#include "support/scratch_dir.h"

namespace envdoctor::scenarios {

struct PipItem {
  std::string name, version;
  std::string wheel;      // install: the wheel read (in place, or downloaded); "" for a removal
  std::string url;        // install: where pip would take it from (the report's download_info.url)
  std::string replaces;   // install: the installed version pip removes first ("" when none)
  bool direct = true;     // install: given as a URL or path (pip records it), not found on an index
  bool laid_out = false;  // install: `wheel` is a directory uv laid the distribution out in
};

struct PipPlan {
  Installer installer = Installer::kPip;  // whose plan: pip's, or uv's (scenarios/uv_plan.h)
  python::PipAction action = python::PipAction::kInstall;
  std::vector<PipItem> install;            // in pip's order
  std::vector<PipItem> remove;             // installed distributions pip would remove or replace
  std::vector<std::string> not_installed;  // uninstall: names pip will skip, as the user wrote them
  // Why the change cannot be checked, pip's own words first ("" when it can), and pip's status
  // when its dry run failed (0 otherwise: then envdoctor's refusal is status 1).
  std::string cannot_check;
  int dry_run_status = 0;
  // Requirements pip found no distribution of in any form, wheel or source, on the indexes and
  // links it was given (`pip index versions` lists none): pip's own reason is the whole story,
  // and installing unchecked would fail the same way.
  std::vector<std::string> not_found;
  // The wheels pip fetched or the distributions uv laid out, removed with the plan.
  std::shared_ptr<support::ScratchDir> scratch;

  // The change to simulate.
  Changes changes() const;
};

// After the installer ran `plan` (an install) as `args` asked: records, for each distribution it
// installed from an index or links, the options that found it (python/index_origins.h), so that
// a later fix reinstalls it from there. false with `error` set when that cannot be written.
bool remember_index_origins(const environment::Environment& env, const PipPlan& plan,
                            const std::vector<std::string>& args, std::string* error);

// An uninstall of `names` by `installer`: each installed one removed (by PEP 503 name), the
// others listed as not installed, as written.
PipPlan uninstall_plan(const environment::Environment& env, Installer installer, const std::vector<std::string>& names);

// Whether pip may run: the change introduces no errors (kSafe); it does (kRefused); or it could
// not be checked (kCannotCheck). DESIGN.md: pip runs only if its change breaks nothing.
enum class PipVerdict { kSafe, kRefused, kCannotCheck };
PipVerdict pip_verdict(const PipPlan& plan, const std::vector<checks::Finding>& findings);
const char* verdict_name(PipVerdict verdict);  // "safe", "refused", "cannot-check"

// envdoctor's exit status when pip does not run: pip's own status when its dry run failed (its
// resolution errors keep their status), else 1 (DESIGN.md).
int status_without_pip(const PipPlan& plan);

// pip uninstall ARGS. nullopt with `error` when the environment has no pip (envdoctor pip runs
// its own), or, in pip's words, when a requirements file cannot be read.
std::optional<PipPlan> plan_uninstall(const environment::Environment& env, const std::vector<std::string>& args,
                                      std::string* error);

// pip install ARGS. nullopt with `error` when envdoctor cannot ask pip at all: no pip, a pip too
// old for --report (before 22.2), a report it cannot read, an option that installs elsewhere.
// A plan with `cannot_check` when pip cannot say (its dry run failed) or a wheel is not to be
// had (a source distribution only, a download that failed or does not match the report).
std::optional<PipPlan> plan_install(const environment::Environment& env, const std::vector<std::string>& args,
                                    std::string* error);

// Whether pip can be asked for a plan at all: the environment has its own pip (envdoctor pip runs
// it), and for install, that pip has `--dry-run --report` (22.2 and later) and the arguments
// install into the environment itself. false with `error` when not; nothing is run.
bool pip_can_plan(const environment::Environment& env, python::PipAction action, const std::vector<std::string>& args,
                  std::string* error);

// What `envdoctor pip` decides from: pip's plan, and the environment as the plan leaves it.
struct PipCheck {
  PipPlan plan;
  std::optional<ChangedRun> prediction;  // absent when the plan cannot be checked
  PipVerdict verdict = PipVerdict::kCannotCheck;
};

// An installer's plan, made while the environment as it is is checked: reads the environment only.
using Planner = std::function<std::optional<PipPlan>(std::string* error)>;

// `plan` checked as a change (ChangeCheck). The installer's dry run and the check of the
// environment as it is do not depend on each other, so they run side by side: the user waits for
// the longer of the two, not for both. nullopt with `error` when there is no plan (the planner's
// error) or it cannot be simulated.
std::optional<PipCheck> check_planned_change(const environment::Environment& env,
                                             const environment::Knowledge& knowledge, const cuda::CudaTables& tables,
                                             checks::CheckSettings settings, const Planner& plan, std::string* error);

// pip's plan for ACTION ARGS (plan_install, plan_uninstall), checked by check_planned_change.
// nullopt with `error` when pip cannot be asked (pip_can_plan, the plans' errors) or the plan
// cannot be simulated.
std::optional<PipCheck> check_pip_change(const environment::Environment& env, const environment::Knowledge& knowledge,
                                         const cuda::CudaTables& tables, checks::CheckSettings settings,
                                         python::PipAction action, const std::vector<std::string>& args,
                                         std::string* error);

// The user's own command: EXE -m pip ACTION ARGS, exactly as given.
std::vector<std::string> pip_command(const environment::Environment& env, python::PipAction action,
                                     const std::vector<std::string>& args);

// Where the environment's distributions say uv installed them (INSTALLER) and `uv` is on PATH
// (an executable, as execvp finds it): a sentence for `envdoctor pip`'s user that a plain `uv pip`
// command goes unchecked and how to give it to `envdoctor uv pip` instead (and, where the
// environment has no pip, as `uv venv` makes them, that envdoctor pip has none to run), else "".
std::string uv_note(const environment::Environment& env);

// The user's own options about where to find distributions (--no-index, -f DIR, --index-url ...)
// put into every install of the fixes of `findings` that has none: a fix after a refused
// `envdoctor pip install --no-index -f DIR X` finds what it installs where the user's command did.
void keep_user_index_options(const environment::Environment& env, const std::vector<std::string>& args, bool uv,
                             std::vector<checks::Finding>& findings);

}  // namespace envdoctor::scenarios
