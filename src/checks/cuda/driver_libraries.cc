#include "checks/cuda/driver_libraries.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "support/text.h"

namespace envdoctor::checks {

using environment::Knowledge;

namespace fs = std::filesystem;
using support::join;
using support::join_some;

namespace {

bool is_missing_driver_library(const Knowledge& knowledge, const Finding& f) {
  if (f.code != Code::kMissingLibrary && f.code != Code::kProgramWillNotStart) return false;
  if (!f.library) return false;
  // A program's finding keeps the library of its first fatal error; only "not found" is ours.
  if (f.code == Code::kProgramWillNotStart && f.load_error != loader::LoadError::Kind::kMissingLibrary) return false;
  return knowledge.driver_library(fs::path(*f.library).filename().string()) != nullptr;
}

// The driver library a finding misses, when a GPU container's toolkit does not mount it (the
// capability it belongs to is not asked for): the loader does not find it there either.
const environment::DriverLibrary* unmounted(const Context& ctx, const Finding& f) {
  if (!ctx.env.gpu_container) return nullptr;
  const environment::DriverLibrary* lib = ctx.knowledge.driver_library(fs::path(*f.library).filename().string());
  return ctx.env.gpu_container->capabilities.has(lib->capability) ? nullptr : lib;
}

// The driver library a finding misses when the node's driver lacks it (its snapshot does not
// list it): no mount and no driver library accounting brings it.
const environment::DriverLibrary* not_on_node(const Context& ctx, const Finding& f) {
  const std::optional<std::vector<std::string>>& node = ctx.settings.gpu.driver_libraries;
  if (!node) return nullptr;
  std::string name = fs::path(*f.library).filename().string();
  if (std::find(node->begin(), node->end(), name) != node->end()) return nullptr;
  return ctx.knowledge.driver_library(name);
}

// Why, and what to do, in the finding's hint: the node's driver lacks it.
void explain_not_on_node(const Context& ctx, const environment::DriverLibrary& lib, Finding& f) {
  const CudaTarget& target = ctx.settings.gpu;
  const std::vector<std::string>& listed = *target.driver_libraries;
  f.own_hint(fs::path(*f.library).filename().string() + " is the NVIDIA driver's (" + lib.capability +
             " capability), and the node's driver " + (target.driver ? target.driver->text + " " : "") +
             "does not provide it (" + target.driver_source + ": its snapshot lists " +
             (listed.empty() ? std::string("no driver library") : join_some(listed)) +
             "): install the driver's package that ships it on the node (with the same version as the driver)");
}

// Why, and what to ask for, in the finding's hint: the container does not ask for its capability.
void explain_unmounted(const Context& ctx, const environment::DriverLibrary& lib, Finding& f) {
  std::string name = fs::path(*f.library).filename().string();
  const image::DriverCapabilities& caps = ctx.env.gpu_container->capabilities;
  std::vector<std::string> wanted = caps.names;
  wanted.push_back(lib.capability);
  std::sort(wanted.begin(), wanted.end());
  f.own_hint(name + " is the NVIDIA driver's (" + lib.capability +
             " capability), and the NVIDIA container toolkit mounts only the driver libraries of the capabilities "
             "the container asks for (" +
             caps.source + "); ask for " + lib.capability + " too: NVIDIA_DRIVER_CAPABILITIES=" + join(wanted, ",") +
             " in the image's environment (ENV), or `docker run -e NVIDIA_DRIVER_CAPABILITIES=" + join(wanted, ",") +
             "`");
}

}  // namespace

std::vector<std::string> account_driver_libraries(const Context& ctx, std::vector<Finding>& findings) {
  const Knowledge& knowledge = ctx.knowledge;
  const CudaTarget& target = ctx.settings.gpu;
  std::map<std::string, std::set<std::string>> consumers;  // library -> files that need it
  for (Finding& f : findings) {
    if (!is_missing_driver_library(knowledge, f)) continue;
    if (const environment::DriverLibrary* lib = not_on_node(ctx, f)) explain_not_on_node(ctx, *lib, f);
    else if (const environment::DriverLibrary* lib = unmounted(ctx, f)) explain_unmounted(ctx, *lib, f);
  }
  std::erase_if(findings, [&](const Finding& f) {
    if (!is_missing_driver_library(knowledge, f) || not_on_node(ctx, f) || unmounted(ctx, f)) return false;
    consumers[fs::path(*f.library).filename().string()].insert(fs::path(f.file).lexically_normal().string());
    return true;
  });
  if (consumers.empty()) return {};
  std::vector<std::string> libraries;
  std::set<std::string> files;
  for (const auto& [library, by] : consumers) {
    libraries.push_back(library);
    files.insert(by.begin(), by.end());
  }
  std::vector<std::string> names;
  for (const std::string& f : files) names.push_back(fs::path(f).filename().string());
  std::string needed = join(libraries) + (libraries.size() == 1 ? " is" : " are") + " the NVIDIA driver's, needed by " +
                       std::to_string(files.size()) + (files.size() == 1 ? " file: " : " files: ") + join_some(names);
  if (!target.driver)
    return {"no NVIDIA driver: the GPU libraries cannot load here (" + needed +
            "); pass --driver VERSION to check the environment for a GPU node"};
  return {needed + "; taken as present, from driver " + target.driver->text + " (" + target.driver_source +
          "): on the host the driver installs them, in a container the NVIDIA container toolkit mounts them"};
}

}  // namespace envdoctor::checks
