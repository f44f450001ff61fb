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
// rather than from `pip inspect`: both read the same .dist-info directories, and one pip start
// less is a third of envdoctor's own time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks/environment.h"
#include "checks/simulation.h"

namespace envdoctor::checks {

struct PipItem {
  std::string name, version;
  std::string wheel;     // install: the wheel read (in place, or downloaded); "" for a removal
  std::string url;       // install: where pip would take it from (the report's download_info.url)
  std::string replaces;  // install: the installed version pip removes first ("" when none)
  bool direct = true;    // install: given as a URL or path (pip records it), not found on an index
};

class DownloadDir;

struct PipPlan {
  std::string action;                      // "install" or "uninstall"
  std::vector<PipItem> install;            // in pip's order
  std::vector<PipItem> remove;             // installed distributions pip would remove or replace
  std::vector<std::string> not_installed;  // uninstall: names pip will skip, as the user wrote them
  // Why the change cannot be checked, pip's own words first ("" when it can), and pip's status
  // when its dry run failed (0 otherwise: then envdoctor's refusal is status 1).
  std::string cannot_check;
  int dry_run_status = 0;
  std::shared_ptr<DownloadDir> downloads;  // the wheels pip fetched, removed with the plan

  // The change to simulate.
  Changes changes() const;
};

// Whether pip may run: the change introduces no errors (kSafe); it does (kRefused); or it could
// not be checked (kCannotCheck). DESIGN.md: pip runs only if its change breaks nothing.
enum class PipVerdict { kSafe, kRefused, kCannotCheck };
PipVerdict pip_verdict(const PipPlan& plan, const std::vector<Finding>& findings);
const char* verdict_name(PipVerdict verdict);  // "safe", "refused", "cannot-check"

// envdoctor's exit status when pip does not run: pip's own status when its dry run failed (its
// resolution errors keep their status), else 1 (DESIGN.md).
int status_without_pip(const PipPlan& plan);

// pip uninstall ARGS. nullopt with `error` (pip's words) when a requirements file cannot be read.
std::optional<PipPlan> plan_uninstall(const Environment& env, const std::vector<std::string>& args, std::string* error);

// pip install ARGS. nullopt with `error` when envdoctor cannot ask pip at all: no pip, a pip too
// old for --report (before 22.2), a report it cannot read, an option that installs elsewhere.
// A plan with `cannot_check` when pip cannot say (its dry run failed) or a wheel is not to be
// had (a source distribution only, a download that failed or does not match the report).
std::optional<PipPlan> plan_install(const Environment& env, const std::vector<std::string>& args, std::string* error);

// The user's own command: EXE -m pip ACTION ARGS, exactly as given.
std::vector<std::string> pip_command(const Environment& env, const std::string& action,
                                     const std::vector<std::string>& args);

// Where the environment's distributions say uv installed them (INSTALLER) and `uv` is on PATH:
// a sentence for the user, else "".
std::string uv_note(const Environment& env);

}  // namespace envdoctor::checks
