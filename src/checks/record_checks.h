// The checks of package records against the files on disk: record-missing-file,
// record-size-mismatch, record-hash-mismatch (with --verify-hashes), file-owned-twice,
// metadata-only-package. Pure functions of the inventory and the file system.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/context.h"
#include "checks/finding.h"
#include "environment/environment.h"

namespace envdoctor::checks {

// The records of every distribution against the disk. Which files' contents are held to their
// records (ctx.settings): a missing file is always reported; a file that is there but differs
// (its size, and with verify_hashes its hash) only where it decides what loads (an ELF file, a
// file named as a shared object), unless all_files: other files that differ are as often local
// edits (a CA certificate appended to cacert.pem) that a reinstall would undo. on_hash follows
// --verify-hashes file by file (for a progress line).
std::vector<Finding> check_records(const Context& ctx);

// Of the distributions whose RECORDs list `path`, the one whose copy the file holds now: the owner
// whose recorded sha256 matches the file's content (of several that match, identical copies, the
// last listed). nullptr when none matches or the file cannot be read. Only the path's own owners
// are consulted; a path with one owner is that owner's without hashing.
const python::Distribution* copy_holder(const environment::Environment& env, const std::string& path);

}  // namespace envdoctor::checks
