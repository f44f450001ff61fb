// The NVIDIA container toolkit's requirement check, as it decides whether a container starts.
//
// Which requirements an image has is the toolkit's (nvidia-container-toolkit,
// internal/config/image/cuda_image.go, GetRequirements): every NVIDIA_REQUIRE_* variable of the
// image's environment but NVIDIA_REQUIRE_JETPACK*; for a "legacy" image (CUDA_VERSION set,
// NVIDIA_REQUIRE_CUDA unset or empty) also `cuda>=MAJOR.MINOR` of CUDA_VERSION; none at all when
// NVIDIA_DISABLE_REQUIRE is true as Go's strconv.ParseBool reads it.
//
// How one is evaluated is libnvidia-container's (src/cli/dsl.c, dsl_evaluate, and
// src/cli/configure.c's rules): space-separated terms are alternatives (OR), comma-separated
// conditions inside one are all needed (AND); a condition is NAME OP VALUE with the names cuda
// (the CUDA version the driver reports), driver (its version), arch (the GPU's compute
// capability, "8.6") and brand (NVML's brand, compared without case), the operators = != < <=
// > >=, versions compared number by number. Every requirement is evaluated for each visible GPU;
// with none known, arch and brand hold, as they do in the toolkit when no device is visible, and
// a brand this tool cannot know (a `--gpu` gives the architecture only) holds too. The first
// requirement that fails stops the container with the toolkit's message, which names the
// requirement's first term whatever failed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace envdoctor::image {

// What the toolkit knows of the node.
struct NodeFacts {
  std::optional<std::string> driver;  // "550.54.15"; nullopt: no driver (the conditions hold)
  // The CUDA version the driver reports ("12.4"), when known. Otherwise, for a driver older than
  // every row this tool has, the release it is known to be older than (`cuda_below`, "12.0").
  std::optional<std::string> cuda;
  std::optional<std::string> cuda_below;
  struct Device {
    std::string arch;                  // "9.0"
    std::optional<std::string> brand;  // "tesla"; nullopt: unknown (holds)
  };
  std::vector<Device> devices;
};

struct RequirementVerdict {
  bool refused = false;          // the toolkit would not start the container
  bool undecided = false;        // a condition depends on what this tool cannot know
  std::string variable;          // the requirement that decided ("NVIDIA_REQUIRE_CUDA", or "CUDA_VERSION")
  std::string requirement;       // its value ("cuda>=12.4 brand=tesla,driver>=470,driver<471")
  std::string message;           // the toolkit's words: "nvidia-container-cli: requirement error: ..."
  std::string failed_condition;  // the first condition that failed in the last alternative ("cuda>=12.4")
  bool disabled = false;         // NVIDIA_DISABLE_REQUIRE is true
};

// The requirements of an image's environment (KEY=VALUE pairs, later ones win), by name, sorted.
std::vector<std::pair<std::string, std::string>> container_requirements(
    const std::vector<std::pair<std::string, std::string>>& env, bool* disabled);

// The verdict on `env`'s requirements for `node`.
RequirementVerdict evaluate_requirements(const std::vector<std::pair<std::string, std::string>>& env,
                                         const NodeFacts& node);

// dsl_compare_version: 1 true, 0 false, -1 not versions (libnvidia-container src/cli/dsl.c).
int compare_versions(const std::string& a, const std::string& op, const std::string& b);

}  // namespace envdoctor::image
