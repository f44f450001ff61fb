#include "checks/system_copy.h"

#include <filesystem>
#include <set>

#include "advice/fix_request.h"
#include "loader/search_paths.h"
#include "python/metadata_file.h"

namespace envdoctor::checks {

using environment::Environment;
using environment::KnownLibrary;

namespace fs = std::filesystem;

namespace {

bool within(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

// Whether `path` is the environment's own: under its prefix or one of its site directories.
bool inside(const Environment& env, const std::string& path) {
  if (within(path, env.python.prefix)) return true;
  for (const std::string& site : env.inventory.site_dirs)
    if (within(path, site)) return true;
  return false;
}

// The directories `consumer`'s RPATH and RUNPATH name, $ORIGIN expanded, lexically normal.
std::set<std::string> searched_dirs(const Environment& env, const std::string& consumer) {
  std::set<std::string> out;
  const environment::ElfRecord* r = env.elf(consumer);
  if (!r || !r->opened->elf) return out;
  std::optional<std::string> origin = fs::path(consumer).parent_path().string();
  for (const auto& list : {r->opened->elf->rpath, r->opened->elf->runpath}) {
    if (!list) continue;
    for (const std::string& dir : loader::split_search_path(*list, ":", origin, env.loader))
      if (!dir.empty()) out.insert(environment::normalize_path(dir));
  }
  return out;
}

// The wheel that would provide `soname` to `consumer` of `dist` here, not installed: one `dist`
// requires, or one whose install directory the consumer searches and finds empty of it.
const KnownLibrary* stand_in_for(const Context& ctx, const python::Distribution& dist, const std::string& consumer,
                                 const std::string& soname) {
  const Environment& env = ctx.env;
  std::set<std::string> required;
  for (const python::Requirement& r : dist.requirements_for(env.python.markers))
    required.insert(python::normalize_name(r.name));
  std::set<std::string> searched = searched_dirs(env, consumer);
  std::vector<const KnownLibrary*> providers = ctx.knowledge.providers(soname);
  // A wheel that ships it is installed: its file gone is record-missing-file's, with its reinstall.
  for (const KnownLibrary* k : providers)
    if (env.inventory.find(k->package)) return nullptr;
  for (const KnownLibrary* k : providers)
    if (required.count(python::normalize_name(k->package))) return k;
  for (const KnownLibrary* k : providers) {
    if (k->folder.empty()) continue;
    for (const std::string& site : env.inventory.site_dirs) {
      std::string dir = environment::normalize_path(site + "/" + k->folder);
      if (searched.count(dir) && !env.files.exists(dir + "/" + soname)) return k;
    }
  }
  return nullptr;
}

Finding stands_in(const Context& ctx, const python::Distribution& dist, const std::string& consumer,
                  const std::string& soname, const std::string& copy, const KnownLibrary& k) {
  const Environment& env = ctx.env;
  Finding f;
  f.code = Code::kSystemCopyStandsIn;
  f.severity = Severity::kWarning;
  f.file = consumer;
  f.package = dist.name;
  f.library = soname;
  f.message = soname + " loads from " + copy + " (" + env.owner_label(copy) +
              "), outside the environment: " + k.package + ", which ships it, is not installed";
  f.hint = "the environment now depends on a copy outside it: " + dist.name +
           " loads here, and fails in a container or on a node without " + copy +
           " (or with another release of it); install " + k.package + " so that the environment holds its own";
  // NVIDIA's wheel from the index, in the words of the installer of `dist`, at the release `dist`
  // requires (torch pins its cuDNN: nvidia-cudnn-cu13==9.19.0.56); else the index's newest.
  std::string spec = k.package;
  for (const python::Requirement& r : dist.requirements_for(env.python.markers))
    if (python::normalize_name(r.name) == python::normalize_name(k.package) && r.url.empty())
      spec = k.package + r.specifier;
  f.ask({advice::IndexInstall{&dist, spec}});
  return f;
}

}  // namespace

std::vector<Finding> check_system_copies(const Context& ctx, const imports::ResolutionMap& resolutions) {
  std::vector<Finding> out;
  std::set<std::pair<std::string, std::string>> said;  // (package, soname)
  for (const auto& [soname, by_path] : resolutions) {
    if (ctx.knowledge.providers(soname).empty()) continue;
    for (const auto& [copy, consumers] : by_path) {
      if (copy.empty() || inside(ctx.env, copy)) continue;
      for (const std::string& consumer : consumers) {
        const python::Distribution* dist = ctx.env.owner(consumer);
        if (!dist || !inside(ctx.env, consumer) || said.count({dist->name, soname})) continue;
        if (const KnownLibrary* k = stand_in_for(ctx, *dist, consumer, soname)) {
          said.insert({dist->name, soname});
          out.push_back(stands_in(ctx, *dist, consumer, soname, copy, *k));
        }
      }
    }
  }
  return out;
}

}  // namespace envdoctor::checks
