// The checks of package records against the files on disk: record-missing-file,
// record-size-mismatch, record-hash-mismatch (with --verify-hashes), file-owned-twice,
// metadata-only-package. Pure functions of the inventory and the file system.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checks/environment.h"
#include "checks/finding.h"
#include "checks/knowledge.h"

namespace envdoctor::checks {

// `on_hash(done, total)` follows --verify-hashes file by file (for a progress line); may be empty.
std::vector<Finding> check_records(const Environment& env, const Knowledge& knowledge, bool verify_hashes,
                                   const std::function<void(size_t, size_t)>& on_hash = {});

}  // namespace envdoctor::checks
