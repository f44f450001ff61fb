#include "checks/container_checks.h"

#include <algorithm>

#include "support/text.h"

namespace envdoctor::checks {

image::NodeFacts node_facts(const CudaTarget& target, const cuda::CudaTables& tables) {
  image::NodeFacts node;
  if (target.driver) {
    node.driver = target.driver->text;
    // What cuDriverGetVersion says: NVML's answer where there is one, else the tables'.
    std::optional<cuda::MajorMinor> cuda = target.driver_cuda;
    if (!cuda) cuda = tables.newest_cuda_for_driver(*target.driver);
    if (cuda) {
      node.cuda = cuda->str();
    } else if (!tables.driver_beyond_table(*target.driver) && !tables.toolkit_driver_minimum.empty()) {
      // Older than every row: its CUDA is older than the oldest release the tables know.
      cuda::MajorMinor oldest = tables.toolkit_driver_minimum.front().cuda;
      for (const cuda::ToolkitDriverMinimum& t : tables.toolkit_driver_minimum) oldest = std::min(oldest, t.cuda);
      node.cuda_below = oldest.str();
    }
  }
  for (const cuda::Gpu& gpu : target.gpus)
    node.devices.push_back({std::to_string(gpu.sm / 10) + "." + std::to_string(gpu.sm % 10), std::nullopt});
  return node;
}

namespace {

// What the node needs for `condition` ("cuda>=12.4"), for the hint.
std::string remedy(const std::string& condition, const cuda::CudaTables& tables) {
  if (condition.rfind("cuda>=", 0) == 0 || condition.rfind("cuda>", 0) == 0) {
    std::string version = condition.substr(condition.find_first_of("0123456789"));
    if (std::optional<cuda::MajorMinor> mm = cuda::MajorMinor::parse(version))
      if (std::optional<cuda::DriverVersion> driver = tables.full_compat_driver(*mm))
        return "run it on a node whose driver is " + driver->text + " or newer (CUDA " + mm->str() +
               "), or use an image built for an older CUDA";
  }
  return "run it on a node that meets the requirement, or use an image whose requirement the node meets";
}

std::vector<std::string> gpu_container_notes(const environment::GpuContainerFacts& gpu) {
  std::vector<std::string> notes;
  const image::DriverCapabilities& caps = gpu.capabilities;
  std::string mounts =
      caps.all ? "all the driver's libraries" : "the driver's " + support::join(caps.names, " and ") + " libraries";
  std::string line = "as a GPU container on driver " + gpu.driver + ", the NVIDIA container toolkit mounts " + mounts +
                     " (" + caps.source + ") and rebuilds /etc/ld.so.cache at start (its ldconfig, " +
                     std::to_string(gpu.entries) + " entries)";
  if (gpu.changed.empty()) {
    line += ": every library resolves as with the image's own cache";
  } else {
    std::vector<std::string> changes;
    for (const environment::GpuContainerFacts::Change& c : gpu.changed)
      changes.push_back(c.soname + " => " + (c.after.empty() ? "not listed" : c.after) +
                        " (the image's cache: " + (c.before.empty() ? "not listed" : c.before) + ")");
    line += "; " + std::to_string(changes.size()) + (changes.size() == 1 ? " library resolves" : " libraries resolve") +
            " otherwise than with the image's own cache, which a start without the toolkit uses: " +
            support::join_some(changes);
  }
  notes.push_back(std::move(line));
  if (gpu.compat)
    notes.push_back("cuda-compat's " + gpu.compat->path + (gpu.compat->used ? " is used" : " is not used") +
                    " (the toolkit's enable-cuda-compat hook: " + gpu.compat->why + ")");
  return notes;
}

}  // namespace

ContainerCheckResult check_container_requirements(const Context& ctx) {
  const environment::Environment& env = ctx.env;
  const CudaTarget& target = ctx.settings.gpu;
  const cuda::CudaTables& tables = ctx.tables;
  ContainerCheckResult out;
  if (env.gpu_container) out.notes = gpu_container_notes(*env.gpu_container);
  if (!env.image || !target.driver) return out;
  image::NodeFacts node = node_facts(target, tables);
  image::RequirementVerdict verdict = image::evaluate_requirements(env.image->env, node);
  if (verdict.disabled) {
    out.notes.push_back(
        "the image sets NVIDIA_DISABLE_REQUIRE: the NVIDIA container toolkit checks none of its "
        "NVIDIA_REQUIRE_* requirements");
    return out;
  }
  if (verdict.undecided) {
    out.notes.push_back(verdict.variable + "=" + verdict.requirement + " not checked: driver " + target.driver->text +
                        " is newer than the CUDA tables, so the CUDA version it reports is not known here");
    return out;
  }
  if (!verdict.refused) return out;
  Finding f;
  f.code = Code::kContainerRequirementUnmet;
  f.severity = Severity::kError;
  f.version = target.driver->text;
  f.message = verdict.message;
  std::string reports = node.cuda         ? "CUDA " + *node.cuda
                        : node.cuda_below ? "a CUDA older than " + *node.cuda_below
                                          : "an unknown CUDA version";
  std::string first = verdict.requirement.substr(0, verdict.requirement.find(' '));
  bool alternatives = verdict.requirement.find(' ') != std::string::npos;
  f.hint = "the image requires " + verdict.variable + "=" + verdict.requirement +
           (alternatives ? " (any one of its space-separated alternatives)" : "") + "; driver " + target.driver->text +
           " (" + target.driver_source + ") reports " + reports + ", so " +
           (alternatives ? "none holds" : verdict.failed_condition + " fails") + ": " + remedy(first, tables) +
           ". NVIDIA_DISABLE_REQUIRE=1 skips the check, not the driver's limits";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace envdoctor::checks
