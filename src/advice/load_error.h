// What fixes a load failure: the file and package to blame, the loader's words explained, and
// the command that fixes it. The advice uses what only envdoctor knows together: the records (a
// file a package lists but lost), the ELF index (a copy that exists but is not on the search
// path), the knowledge table (which wheel ships a SONAME), and a second load of the consumer
// (whether taking a directory off LD_LIBRARY_PATH would help).
//
// A check keeps, with its finding, the `LoadFailure`: the error and what the advice reads of the
// process it happened in, copied out of it. The fix is made from it after the checks
// (advice/fix_request.h), by kind of error: missing_library.cc, missing_version.cc,
// undefined_symbol.cc, and shadowed.cc for a copy that LD_LIBRARY_PATH puts first.
#pragma once

#include "advice/fix.h"
#include "advice/load_failure.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::advice {

Fix fix_for_load_error(const environment::Environment& env, const environment::Knowledge& knowledge,
                       const LoadFailure& failure);

}  // namespace envdoctor::advice
