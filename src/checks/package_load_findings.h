// Findings from what packages load by themselves (data/package_loads.json, run by
// imports/package_loads.h): one code for a package's own load that fails, runtime-library-missing,
// in the package's own words, and silent-fallback for one that fails without raising.
//
// - A rule that raises at import: `import P` fails; an error on the file the rule is about.
//   Every package whose import imports P first fails with it, as its consequence.
// - A rule that raises at first use or first compile: the same code; the package imports.
// - A rule that falls back: a warning, silent-fallback: the environment imports, and P runs
//   without what it loads.
// Each hint says which place the package would have found its copy in, and what puts one there.
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "imports/package_loads.h"

namespace envdoctor::checks {

// The finding of a rule run that ended in the package's exception or fallback; nullopt where it
// did not, or where the load checks already report the same failure (a file of the environment
// whose own load fails in the words the package raises).
std::optional<Finding> package_load_finding(const Context& ctx, const imports::RuleRun& run);

// An opener rule's run (cuDNN's shim, NVRTC) for the library `opener`: a name none of whose copies
// the dlopen from it finds, in the opener's words, with the RECORD-missing file that caused it
// where there is one; an `own` copy found outside the opener's package, a warning.
std::vector<Finding> opener_findings(const Context& ctx, const imports::RuleRun& run,
                                     const loader::LoadedObject& opener);

// The package rule that opens `file` itself (a file of one of the rule's packages, by a name of one
// of its steps) and goes on without it where it does not load (ONNX Runtime's CUDA provider): the
// load fails nothing, and the rule's silent-fallback finding says so. nullptr where none.
const environment::PackageRule* falls_back_without(const Context& ctx, const environment::ElfRecord& file);

// `dist` requires the package whose import raised (`run`): its import fails with the same words
// before any module of its own loads; the finding is on `first`, the module it would load first.
Finding requirement_raised(const Context& ctx, const imports::RuleRun& run, const python::Distribution& dist,
                           const environment::ElfRecord& first);

}  // namespace envdoctor::checks
