// `envdoctor uv pip`: uv's plan for the user's `uv pip install|uninstall`, as a change the
// simulation can check, with the verdict, prompt and exit statuses of `envdoctor pip`
// (scenarios/pip_plan.h: the plan is a PipPlan whose installer is Installer::kUv).
//
// The environment is the one uv would change, found as uv documents it (python/uv.h).
// uninstall: uv's own plan, `uv pip uninstall --dry-run ARGS` (its names, its reading of `-r`
// files, its matching), each distribution it names removed by uv's rules (scenarios/simulation.h:
// every RECORD path, including paths another distribution also lists; a path that names a
// directory, its whole tree).
// install: uv's own plan, `uv pip install --dry-run --only-binary :all: ARGS` (python/uv.h's
// lines). A planned wheel file on this disk (` + x @ file:///w/x.whl`) is read in place, as
// `check --with` reads it; every other planned distribution is laid out by uv into a private
// scratch directory (`uv pip install --target DIR --no-deps --only-binary :all: NAME==VERSION`
// with the user's index options, from uv's cache), read from there as a wheel would be
// (python/laid_out.h), and removed with the plan. As uv does, every distribution the install
// replaces is removed before any is installed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenarios/pip_plan.h"

namespace envdoctor::scenarios {

// The interpreter whose environment the user's `uv pip` ARGS would change, as uv itself finds it
// (python/uv.h: `uv pip uninstall --dry-run --verbose -r /dev/null` with the options of ARGS that
// decide it, in this process's environment and directory). nullopt with `error` in uv's words
// when uv finds none, or when uv is not on PATH.
std::optional<std::string> uv_python(const std::vector<std::string>& args, std::string* error);

// Whether uv can be asked at all: `uv` is on PATH, and ARGS change the environment's own scheme
// (not uv's --target or --prefix, which install into another directory, which the simulation
// does not model). false with `error` when not; nothing is run.
bool uv_can_plan(const std::vector<std::string>& args, std::string* error);

// uv pip uninstall ARGS. A plan with `cannot_check` when uv's dry run fails (its words, its
// status) or names a distribution the inventory lacks; nullopt with `error` when uv cannot be run
// or prints no plan envdoctor can read.
std::optional<PipPlan> plan_uv_uninstall(const environment::Environment& env, const std::vector<std::string>& args,
                                         std::string* error);

// uv pip install ARGS. A plan with `cannot_check` when uv's dry run fails (its words, its status)
// or a planned distribution cannot be laid out; nullopt with `error` when uv cannot be run or
// its dry run prints no plan that envdoctor can read.
std::optional<PipPlan> plan_uv_install(const environment::Environment& env, const std::vector<std::string>& args,
                                       std::string* error);

// uv's plan for ACTION ARGS checked as a change (check_planned_change).
std::optional<PipCheck> check_uv_change(const environment::Environment& env, const environment::Knowledge& knowledge,
                                        const cuda::CudaTables& tables, checks::CheckSettings settings,
                                        python::PipAction action, const std::vector<std::string>& args,
                                        std::string* error);

// The user's own command: uv pip ACTION ARGS, exactly as given (uv as PATH finds it).
std::vector<std::string> uv_command(python::PipAction action, const std::vector<std::string>& args);

}  // namespace envdoctor::scenarios
