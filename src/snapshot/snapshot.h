// A snapshot: the native state of one Python environment as one canonical JSON document, and a
// digest of what decides loading (docs/snapshot.md has the schema).
//
// It is made from what `check` already computed (the environment and one CheckRun: findings,
// every NEEDED entry as the load model resolved it, the CUDA facts), never by a second model.
// Canonical means: object keys sorted (nlohmann::json's std::map), arrays sorted by their
// identity (packages by name, files by path, resolutions by file then NEEDED), paths inside the
// environment written relative to its prefix, and nothing that changes between two runs on one
// machine (no times, no host name, no progress). The digest is the SHA-256 of the document's
// compact dump without `digest` itself, the `environment.prefix`, the interpreter's absolute
// path and the findings' prose (`message`, `hint`), which name absolute paths: two identical
// environments at different paths, or on different nodes, give the same digest.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "checks/cuda/cuda_checks.h"
#include "checks/run.h"
#include "environment/environment.h"
#include "environment/node.h"

namespace envdoctor::snapshot {

inline constexpr int kSchema = environment::kSnapshotSchema;

// The snapshot of `env` as checked by `run` for `target`. `run` must come from run_checks on
// this same environment.
nlohmann::json take(const environment::Environment& env, const checks::CheckRun& run, const checks::CudaTarget& target);

// "sha256:<hex>" over the parts of `snapshot` that decide loading (see above).
std::string digest(const nlohmann::json& snapshot);

// Reads a snapshot written by `take` (a file's text). nullopt with `error` set on anything else:
// not JSON, not an envdoctor snapshot, another schema (environment::parse_snapshot, which --node
// reads its node with).
inline std::optional<nlohmann::json> parse(const std::string& text, std::string* error) {
  return environment::parse_snapshot(text, error);
}

}  // namespace envdoctor::snapshot
