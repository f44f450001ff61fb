// What a package's own search (data/package_loads.json) is told beyond its own words, where the search
// reads the process's variables or PATH, or opens copies by their directory (docs/package-loads.md,
// "What envdoctor reports"):
//
// - the variable that makes the rule run to its end, tried on the model: a variable place's variable
//   set to a directory of the environment that holds a copy of its step's names, or PATH with the
//   directory of a program an `on_path` condition asks for ("set X=Y before starting Python");
// - the file a RECORD lists where a sys_path or package place of the failing library's steps looked,
//   and that is missing: the cause;
// - a copy opened with RTLD_GLOBAL from a variable's, a fixed or an ldconfig place, outside every
//   package, of a SONAME a package of the environment ships: from then on it serves the SONAME to
//   the whole process, ahead of the wheel's (TransformerEngine#2381), a warning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "imports/package_loads.h"

namespace envdoctor::checks {

// Whether the rule reads variables or PATH for its places (a variable place, an on_path condition):
// the rules whose fixes are variables.
bool reads_variables(const environment::PackageRule& rule);

// "NAME=VALUE" that makes `run`'s rule run to its end on the model; "" where none does.
std::string passing_variable(const Context& ctx, const imports::RuleRun& run);

// The RECORD-listed file that is missing where a step of the failing load's library looked.
std::optional<Cause> missing_recorded_copy(const Context& ctx, const imports::RuleRun& run);

// Where no variable makes the rule pass: the wheels (data/sonames.json) that install a copy where a
// sys_path place of the failing step looks, its names matching, of the CUDA major of the
// environment's other CUDA wheels where it has some ("install X, whose folder it searches", and
// `f`'s command); else the variables of its places, to be set to a directory holding one. "" for
// neither.
std::string search_fix(const Context& ctx, const imports::RuleRun& run, Finding& f);

// The warnings for copies a run that ended opened with RTLD_GLOBAL ahead of a wheel's.
std::vector<Finding> global_copy_findings(const Context& ctx, const imports::RuleRun& run);

}  // namespace envdoctor::checks
