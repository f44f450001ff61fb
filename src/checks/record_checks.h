// The checks of package records against the files on disk: record-missing-file,
// record-size-mismatch, record-hash-mismatch (with --verify-hashes), file-owned-twice,
// metadata-only-package. Pure functions of the inventory and the file system.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/environment.h"
#include "checks/finding.h"
#include "checks/knowledge.h"

namespace envdoctor::checks {

std::vector<Finding> check_records(const Environment& env, const Knowledge& knowledge, bool verify_hashes);

}  // namespace envdoctor::checks
