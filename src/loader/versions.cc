// Symbol version checks (glibc 2.36 elf/dl-version.c, _dl_check_map_versions): each version an
// object needs from a loaded library that has version definitions.
#include <elf.h>

#include <algorithm>

#include "loader/process.h"

namespace envdoctor::loader {

void Process::check_versions(int object, std::vector<LoadError>& errors) {
  const LoadedObject& o = objects_[object];
  if (!o.elf) return;
  for (const elf::VersionNeed& vn : o.elf->verneed) {
    int provider = find_loaded(vn.file);
    if (provider < 0) continue;  // the library itself is missing: reported as such
    const elf::ElfFile* p = objects_[provider].elf.get();
    if (!p || !p->has_verdef()) continue;  // "no version information available": not an error
    for (const elf::VersionNeedAux& need : vn.versions) {
      bool found = std::any_of(p->verdef.begin(), p->verdef.end(),
                               [&](const elf::VersionDef& d) { return d.hash == need.hash && d.name == need.name; });
      if (found || (need.flags & VER_FLG_WEAK)) continue;
      LoadError err;
      err.kind = LoadError::Kind::kMissingVersion;
      err.object = object;
      err.path = o.path;
      err.library = objects_[provider].path;
      err.version = std::string(need.name);
      err.message = objects_[provider].path + ": version `" + err.version + "' not found (required by " + o.path + ")";
      errors.push_back(err);
    }
  }
}

}  // namespace envdoctor::loader
