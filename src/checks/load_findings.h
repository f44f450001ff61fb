// A load failure as a finding: the loader's code and words, the object whose need failed and the
// packages that own it, and the fix advice gives for it.
#pragma once

#include "checks/finding.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "loader/process.h"

namespace envdoctor::checks {

Finding finding_for_load_error(const environment::Environment& env, const environment::Knowledge& knowledge,
                               const loader::Process& process, const loader::LoadError& error);

}  // namespace envdoctor::checks
