// A load failure as a finding: the loader's code and words, the object whose need failed and the
// packages that own it, and what advice is to make its fix from (after the checks: run.h).
#pragma once

#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/environment.h"
#include "imports/package_loads.h"
#include "loader/object_store.h"
#include "loader/process.h"

namespace envdoctor::checks {

Finding finding_for_load_error(const Context& ctx, const loader::Process& process, const loader::LoadError& error);

// The errors of one load that are failures of the environment, as findings. Left out: the
// symbols a missing library would have provided (a real load stops at the missing library), the
// symbols that bind nowhere in a scope lacking an NVIDIA driver library (where the driver is,
// they bind to it), and, with no interpreter to load modules into (`no_interpreter`), the
// symbols of Python's C API.
std::vector<Finding> findings_for_load_errors(const Context& ctx, const loader::Process& process,
                                              const std::vector<loader::LoadError>& errors, bool no_interpreter);

// A file the loader refuses before it maps anything, as `import` (dlopen by path) reports it.
Finding rejected_file(const Context& ctx, const environment::ElfRecord& file, const loader::Verdict& verdict);

// A program shipped in the environment (torch/bin/test_jit) is not imported: its failure to start
// is a warning, in the words ld.so prints before it exits. The run stops at the first fatal
// error, so one finding.
Finding program_will_not_start(const Context& ctx, const loader::Process& process, const loader::LoadError& error);

}  // namespace envdoctor::checks
