// What-if: the environment as `pip uninstall` (--without) or `pip install` (--with) would leave
// it, built in memory on top of the real one. Nothing is written anywhere.
//
// --without PKG removes every path in PKG's RECORD, including paths other distributions also
// list (pip's uninstall does: it goes by the RECORD alone). --with WHEEL reads the wheel in place,
// checks its tags as pip would, removes an installed version of the same project first (pip
// replaces it), lays every member where pip would put it (existing files overwritten, their
// other owners still listing them), and reads the wheel's ELF files from memory; a distribution
// that uv laid out in a directory of its own is installed the same way from there. The checks then
// run on the changed environment exactly as on a real one.
//
// A change uv makes follows uv's own rules (crates/uv-install-wheel/src/uninstall.rs and
// crates/uv/src/commands/pip/operations.rs, each held to the real uv 0.13.9 by tests/scenarios/uv_test.cc): a
// RECORD path outside the environment's scheme is left alone, a path that names a directory
// loses its whole tree, and an install removes every distribution it replaces before it writes
// any file (not one replacement after another, as pip does).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "checks/load_checks.h"
#include "checks/run.h"
#include "environment/environment.h"

namespace envdoctor::scenarios {

// Whose rules a change follows: how a RECORD is uninstalled, and when the distributions an
// install replaces are removed.
enum class Installer { kPip, kUv };
// "pip", "uv": the program, as the user types it and the JSON names it.
const char* installer_name(Installer installer);

struct Changes {
  std::vector<std::string> without;  // distribution names
  std::vector<std::string> with;     // wheel paths
  bool hash_members = false;         // compute sha256 of every member (for --verify-hashes)
  // Wheels of `with` that pip finds on an index: installed with no recorded origin (no
  // direct_url.json), where a wheel given by path records its file.
  std::set<std::string> from_index;
  // Directories that each hold one distribution laid out by uv (python/laid_out.h), installed
  // after the wheels.
  std::vector<std::string> laid_out;
  Installer installer = Installer::kPip;
};

// `env` as `changes` would leave it: an overlay of it (Environment::overlay) with the uninstalls
// made, then the installs (uv's: `without` names every distribution its install replaces). `env`
// is left as it was. `findings` receives what the change itself produces (wheel-tag-unsupported);
// nullptr with `error` set when a change cannot be simulated at all (a package that is not
// installed, a wheel that is not a valid wheel).
std::unique_ptr<environment::Environment> apply_changes(const environment::Environment& env, const Changes& changes,
                                                        std::vector<checks::Finding>* findings, std::string* error);

// "name==version@metadata_dir" of every distribution: compared before and after a change.
std::set<python::Distribution::Id> distribution_identities(const environment::Environment& env);

// Tells `memo` (filled by the run before the change) what the change touched: every path removed
// or written (as spelled and resolved) and every distribution that came, went or changed.
void note_changes(const environment::Environment& env, const std::set<python::Distribution::Id>& identities_before,
                  checks::LoadMemo& memo);

// What a change did, for people and programs: the scenario and its balance of errors.
struct ChangeSummary {
  std::vector<std::string> added;    // "tinypure 0.1 (wheel)"
  std::vector<std::string> removed;  // "provlib 1.0"
  size_t new_errors = 0;             // errors the change introduces (they decide the exit status)
  size_t old_errors = 0;             // errors that were there before and still are
  size_t fixed_errors = 0;           // errors before the change that it removes
};
// `before` and `after` are the findings of the runs around the change, `after` already marked.
ChangeSummary summarize_change(const environment::Environment& env, const std::vector<checks::Finding>& before,
                               const std::vector<checks::Finding>& after);

// Marks every finding of `after` whose key is not in `before` as new.
void mark_new(const std::vector<checks::Finding>& before, std::vector<checks::Finding>& after);

// The environment a change leaves and every check on it.
struct ChangedRun {
  std::unique_ptr<const environment::Environment> env;
  checks::CheckRun run;
};

// The verdict on a change in its two halves, for a caller that learns the change while the first
// half runs (`envdoctor pip`: pip's dry run beside the check of the environment as it is).
class ChangeCheck {
 public:
  // Every check on `env` as it is: what the change is held against. Only reads `env`.
  ChangeCheck(const environment::Environment& env, const environment::Knowledge& knowledge,
              const cuda::CudaTables& tables, checks::CheckSettings settings);
  ChangeCheck(const ChangeCheck&) = delete;  // settings_.memo points into it
  ChangeCheck& operator=(const ChangeCheck&) = delete;

  // `changes` applied to an overlay of `env` (apply_changes) and every check again, reusing each
  // parse, binding and fatbinary listing of the first run; the findings the change brings are
  // marked new. nullopt with `error` set when the change cannot be simulated. `env` is left as it
  // was. `summary`, when given, receives the scenario and its balance of errors
  // (summarize_change). Once only.
  std::optional<ChangedRun> after(const environment::Environment& env, const Changes& changes, std::string* error,
                                  ChangeSummary* summary = nullptr);

 private:
  const environment::Knowledge& knowledge_;
  const cuda::CudaTables& tables_;
  checks::LoadMemo memo_;
  checks::CheckSettings settings_;
  checks::CheckRun before_;
};

// The verdict on a change (`check --with/--without`): both halves of ChangeCheck in a row.
std::optional<ChangedRun> check_change(const environment::Environment& env, const environment::Knowledge& knowledge,
                                       const cuda::CudaTables& tables, checks::CheckSettings settings,
                                       const Changes& changes, std::string* error, ChangeSummary* summary = nullptr);

// The errors a change introduces: what decides `check --with/--without` (exit 1) and whether
// `envdoctor pip` lets pip run.
size_t new_errors(const std::vector<checks::Finding>& findings);

}  // namespace envdoctor::scenarios
