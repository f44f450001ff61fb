// What fixes a load failure: the file and package to blame, the loader's words explained, and
// the command that fixes it. The advice uses what only envdoctor knows together: the records (a
// file a package lists but lost), the ELF index (a copy that exists but is not on the search
// path), the knowledge table (which wheel ships a SONAME), and a second load of the consumer
// (whether taking a directory off LD_LIBRARY_PATH would help).
#pragma once

#include "advice/fix.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "loader/process.h"

namespace envdoctor::advice {

Fix fix_for_load_error(const environment::Environment& env, const environment::Knowledge& knowledge,
                       const loader::Process& process, const loader::LoadError& error);

}  // namespace envdoctor::advice
