#include "checks/library_checks.h"

#include <filesystem>
#include <map>
#include <set>

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;

namespace fs = std::filesystem;

namespace {

std::string owner_text(const Environment& env, const std::string& path) {
  return path + " (" + env.owner_label(path) + ")";
}

std::string consumers_text(const std::set<std::string>& consumers) {
  std::string out;
  size_t shown = 0;
  for (const std::string& c : consumers) {
    if (shown == 3) break;
    out += (out.empty() ? "" : ", ") + fs::path(c).filename().string();
    ++shown;
  }
  if (consumers.size() > shown) out += " and " + std::to_string(consumers.size() - shown) + " more";
  return out;
}

}  // namespace

std::vector<Finding> check_duplicate_libraries(const Context& ctx, const ResolutionMap& resolutions,
                                               const ImportOrderResult& orders) {
  const Environment& env = ctx.env;
  // Distinct files (by device and inode) per SONAME, in the environment.
  std::map<std::string, std::map<std::pair<dev_t, ino_t>, std::string>> copies;
  for (const ElfRecord& r : env.elf_files) {
    if (r.opened->status != loader::OpenResult::Status::kOk || !r.opened->elf->soname) continue;
    if (r.extension_module || r.executable) continue;
    copies[std::string(*r.opened->elf->soname)].emplace(std::make_pair(r.opened->id.dev, r.opened->id.ino), r.path);
  }
  std::vector<Finding> out;
  std::set<std::string> sonames;
  for (const auto& [soname, files] : copies)
    if (files.size() > 1) sonames.insert(soname);
  for (const auto& [soname, by_path] : resolutions)
    if (by_path.size() > 1) sonames.insert(soname);

  for (const std::string& soname : sonames) {
    if (orders.conflicting.count(soname)) continue;  // import-order-conflict says more
    std::set<std::string> paths;
    if (auto it = copies.find(soname); it != copies.end())
      for (const auto& [id, path] : it->second) paths.insert(path);
    auto res = resolutions.find(soname);
    if (res != resolutions.end())
      for (const auto& [path, consumers] : res->second) paths.insert(path);
    if (paths.size() < 2) continue;

    Finding f;
    f.code = Code::kDuplicateLibrary;
    f.severity = Severity::kWarning;
    f.library = soname;
    f.file = *paths.begin();
    std::string list;
    for (const std::string& p : paths) {
      list += (list.empty() ? "" : ", ") + owner_text(env, p);
      if (const python::Distribution* d = env.owner(p)) f.packages.push_back(d->name);
    }
    if (const python::Distribution* d = env.owner(f.file)) f.package = d->name;
    f.message = std::to_string(paths.size()) + " copies of " + soname + ": " + list;
    std::string who;
    if (res != resolutions.end())
      for (const auto& [path, consumers] : res->second)
        who += (who.empty() ? "" : "; ") + consumers_text(consumers) + " load " + path;
    if (orders.compatible.count(soname))
      f.hint = who +
               "; both import orders were tried and each copy serves the other's users, so nothing fails now. "
               "In one process only the copy imported first is used: to be safe, keep these packages on one "
               "release of " +
               soname;
    else if (who.empty())
      f.hint =
          "nothing loads more than one of them now; if two are ever imported into one process, the first one "
          "loaded serves both, so keep them on one release of " +
          soname;
    else
      f.hint =
          who + "; in one process the first one loaded serves all, so keep these packages on one release of " + soname;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::checks
