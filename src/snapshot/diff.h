// `envdoctor diff A B`: what differs between two snapshots, said the way a user needs it.
//
// Each section compares things by their identity in the snapshot (a package by its normalized
// name, a file by its path relative to the environment, a resolution by its NEEDED name and the
// file asking), so two environments at different prefixes compare file by file. A change is
// one subject with what it was on A and what it is on B (nullopt: absent on that side).
// Resolutions that changed the same way for several files are one change listing the files,
// since one lost library is usually needed by many. A snapshot writes the paths inside its own
// prefix relative and the others absolute, so a venv's snapshot names its base interpreter's files
// absolute where the base's own snapshot names them relative: an absolute path of one side that
// lies inside the other side's prefix is compared as the other side spells it, and the same file
// under two spellings is one file. Findings are compared by everything but
// their prose (which names absolute paths); B's errors that A has not decide the exit status.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace envdoctor::snapshot {

struct Change {
  std::string subject;  // "nvidia-cudnn-cu12", "lib/python3.11/site-packages/x.so", "LD_LIBRARY_PATH"
  std::optional<std::string> before, after;  // nullopt: absent on that side
  std::vector<std::string> files;            // resolutions: the files whose NEEDED changed this way
};

struct FindingChange {
  std::string code, severity;
  std::string file;     // relative to the environment, "" for a package's finding
  std::string package;  // "" when none
  std::string library;  // "" when none
  std::string message;  // B's words (A's for a finding gone)
};

// One side of a diff: which environment its snapshot is of, and where the snapshot came from.
struct Side {
  std::string source;   // the snapshot file, or "-" (the environment now); set by the caller
  std::string prefix;   // environment.prefix
  std::string python;   // the interpreter, absolute ("" when the snapshot names none)
  std::string version;  // "3.11.7"
};

struct Diff {
  std::string digest_a, digest_b;
  Side a, b;
  std::vector<Change> environment;  // the interpreter
  std::vector<Change> packages;
  std::vector<Change> files;
  std::vector<Change> resolutions;
  std::vector<Change> loader;
  std::vector<Change> cuda;
  std::vector<FindingChange> new_findings;   // on B, not on A
  std::vector<FindingChange> gone_findings;  // on A, not on B
  size_t new_errors = 0;

  bool same() const;
};

// Both must have passed snapshot::parse (or come from snapshot::take). Values of unexpected
// types are read as absent, never thrown on.
Diff diff(const nlohmann::json& a, const nlohmann::json& b);

// The environment a snapshot is of (its source left "").
Side side_of(const nlohmann::json& snapshot);

}  // namespace envdoctor::snapshot
