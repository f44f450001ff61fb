// The node the environment runs on: its GPUs, its NVIDIA driver and the driver libraries it
// provides. Read once, when a command's session opens (environment/session.h), from --gpu and
// --driver, from the snapshot that --node names, or from this machine (cuda::detect_driver, run
// only for what the arguments leave out); the session holds it, and the checks read it from
// their context (checks::CheckSettings::gpu). The environment's own start depends on it: an
// image runs as a GPU container on the node's driver (image/gpu_container.h).
//
// A snapshot's envelope and its few `cuda` fields are read here, below the snapshot stage that
// writes them (snapshot/snapshot.h), which checks its documents with the same envelope.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cuda/arch.h"
#include "cuda/driver.h"
#include "cuda/tables.h"
#include "cuda/versions.h"

namespace envdoctor::environment {

// The GPUs and driver the checks are for.
struct Node {
  std::vector<cuda::Gpu> gpus;                  // empty: the arch checks are skipped
  std::string gpus_source;                      // "--gpu", "NVML", "nvidia-smi", "--node FILE"
  std::optional<cuda::DriverVersion> driver;    // the kernel module's; nullopt: driver checks skipped
  std::string driver_source;                    // "--driver", "/proc/driver/nvidia/version", ...
  std::optional<cuda::MajorMinor> driver_cuda;  // the newest CUDA the driver reports (NVML)
  std::vector<std::string> problems;            // from detection
  // The driver libraries the node provides (--node: its snapshot's cuda.driver_libraries, by
  // SONAME); nullopt where not known, when every one is taken as present with the driver.
  std::optional<std::vector<std::string>> driver_libraries;
};

// What names the node: --gpu (repeatable) and --driver, with this machine's for what they leave
// out; or --node, a snapshot file, alone.
struct NodeRequest {
  std::vector<std::string> gpus;
  std::string driver;
  std::string snapshot;
  // This machine's driver and GPUs, when the caller has read them already (the index reads them
  // for its key, cli/indexed.h): read_node takes them rather than reading them again.
  std::optional<cuda::DriverInfo> detected;
};

// Whether `request` leaves anything to this machine (cuda::detect_driver).
bool reads_this_machine(const NodeRequest& request);

// The node `request` names. nullopt with `error` set on an argument that does not parse, a GPU
// that `tables` knows of no CUDA release for, --node given with --gpu or --driver, or a snapshot
// that cannot be read or whose facts are malformed.
std::optional<Node> read_node(const NodeRequest& request, const cuda::CudaTables& tables, std::string* error);

// The schema of the snapshots this envdoctor writes and reads (docs/snapshot.md).
inline constexpr int kSnapshotSchema = 1;

// A snapshot file's text as the document it holds. nullopt with `error` set on anything else: not
// JSON, not an envdoctor snapshot, another schema.
std::optional<nlohmann::json> parse_snapshot(const std::string& text, std::string* error);

// The node a snapshot was taken on (`--node SNAPSHOT`; `source` names it in the messages): its
// driver, the CUDA version that driver reported, its GPUs and driver libraries, exactly as
// recorded (a snapshot of a node without a driver has none). nullopt with `error` set when the
// facts are malformed.
std::optional<Node> snapshot_node(const nlohmann::json& snapshot, const std::string& source, std::string* error);

}  // namespace envdoctor::environment
