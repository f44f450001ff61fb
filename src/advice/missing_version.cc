#include "advice/load_error_kinds.h"

namespace envdoctor::advice {

using environment::Environment;
using environment::Knowledge;
using loader::LoadError;

std::string hint_missing_version(const Environment& env, const Knowledge& knowledge, const LoadFailure& l) {
  const LoadError& e = l.error;
  if (!l.consumer) return "";
  const loader::LoadedObject& consumer = *l.consumer;
  std::string wanted;  // the file name the consumer was linked against
  if (consumer.elf)
    for (const elf::VersionNeed& vn : consumer.elf->verneed)
      for (const elf::VersionNeedAux& a : vn.versions)
        if (a.name == e.version) wanted = std::string(vn.file);
  const python::Distribution* provider_pkg = env.owner(e.library);
  std::string provider_soname;
  if (auto op = env.store->open(e.library); op->status == loader::OpenResult::Status::kOk && op->elf->soname)
    provider_soname = std::string(*op->elf->soname);

  if (!wanted.empty() && !provider_soname.empty() && wanted != provider_soname) {
    std::string h = e.library + " is really " + provider_soname + " (its SONAME), not " + wanted +
                    ": a renamed or symlinked library cannot satisfy versioned symbols";
    if (Fix k = hint_known_providers(env, knowledge, wanted, env.owner(consumer.path)); !k.hint.empty())
      h += "; " + k.hint + (k.command.empty() ? "" : ": " + k.command);
    else h += "; install the real " + wanted;
    return h;
  }
  if (e.version.rfind("GLIBC_", 0) == 0)
    return "the C library (" + env.owner_label(e.library) + ") is older than " + consumer.path + " needs (" +
           e.version + "): use a build for an older glibc (a lower manylinux tag) or a newer system";
  if (e.version.rfind("GLIBCXX_", 0) == 0 || e.version.rfind("CXXABI_", 0) == 0)
    return e.library + " (" + env.owner_label(e.library) + ") is an older libstdc++ than " + consumer.path +
           " needs (" + e.version +
           "); a newer libstdc++ must come first on the search path (check LD_LIBRARY_PATH and conda's lib)";
  return e.library + " (" + env.owner_label(e.library) + ") lacks version " + e.version + " that " + consumer.path +
         " was linked against: install the version of " + (provider_pkg ? provider_pkg->name : e.library) +
         " it was built for";
}

}  // namespace envdoctor::advice
