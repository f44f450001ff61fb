#include <algorithm>
#include <filesystem>
#include <set>

#include "advice/install.h"
#include "advice/load_error_kinds.h"
#include "python/metadata_file.h"

namespace envdoctor::advice {

namespace fs = std::filesystem;
using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::KnownLibrary;
using loader::LoadError;

namespace {

// A package lists a file of this name in its RECORD, but the file is gone: the usual aftermath
// of uninstalling one of two wheels that installed the same path.
Fix hint_lost_file(const Environment& env, const std::string& name) {
  for (const python::OwnershipIndex::Listing& l : env.ownership->listed_as(name)) {
    if (env.files.exists(l.entry->resolved.string())) continue;
    Fix fix = reinstall(env, *l.dist);
    return {l.dist->name + " lists " + l.entry->path +
                " but the file is gone (another package that installed the same path was uninstalled, or it was "
                "deleted); " +
                fix.hint,
            fix.command};
  }
  return {};
}

// Whether distribution `name` is where `consumer` looks for `library`: one of its search
// directories has a path component that is `name` (normalized), like ../provlib/lib.
bool looks_in_package(const loader::LoadedObject& consumer, const std::string& name) {
  std::string dirs = search_dirs(consumer);
  std::string key = python::normalize_name(name);
  for (const fs::path& part : fs::path(dirs))
    if (python::normalize_name(part.string()) == key) return true;
  return false;
}

// A removed distribution (this simulation's --without, or a version a --with replaced) listed a
// file of this name.
const python::Distribution* removed_provider(const Environment& env, const std::string& name) {
  for (const python::Distribution& d : env.removed)
    for (const python::RecordEntry& e : d.record)
      if (python::named(e.resolved.native(), name)) return &d;
  return nullptr;
}

// What the consumer's metadata and the simulation say about a library nobody provides now:
// the change removes the distribution that shipped it, or a requirement is not installed. With
// `only_provided`, only a requirement that is known to ship the library, or whose directory the
// consumer searches, is named (other explanations come first for the rest).
Fix hint_from_requirements(const Environment& env, const Knowledge& knowledge, const loader::LoadedObject& consumer,
                           const std::string& library, bool only_provided) {
  const python::Distribution* own = env.owner(consumer.path);
  std::string looked = where_looked(env, consumer);
  if (const python::Distribution* gone = removed_provider(env, library)) {
    std::string h = library + " comes from " + gone->name + " " + gone->version + ", which this change removes";
    if (own && requirement_on(env, *own, gone->name)) h += "; " + describe(own) + " requires " + gone->name;
    h += ": keep " + gone->name;
    return {h, ""};
  }
  if (!own) return {};
  for (const python::Requirement& r : own->requirements_for(env.python.markers)) {
    if (env.inventory.find(r.name)) continue;
    bool known = false;
    for (const KnownLibrary* k : knowledge.providers(library))
      known |= python::normalize_name(k->package) == python::normalize_name(r.name);
    bool provided = known || looks_in_package(consumer, r.name);
    if (only_provided && !provided) continue;
    std::string h = describe(own) + " requires " + r.name + ", which is not installed";
    h += provided ? "; it provided " + library : "; it may provide " + library;
    if (!looked.empty()) h += "; " + looked;
    Fix fix = install_requirement(env, *own, r);
    if (!fix.hint.empty()) h += "; " + fix.hint;
    return {h, fix.command};
  }
  return {};
}

// A copy exists in the environment, just not where the loader looks for this consumer.
Fix hint_elsewhere(const Environment& env, const std::string& name, const loader::LoadedObject& consumer) {
  for (const ElfRecord& r : env.elf_files) {
    bool match =
        python::named(r.path, name) || (r.opened->elf && r.opened->elf->soname && *r.opened->elf->soname == name);
    if (!match) continue;
    std::string looked = where_looked(env, consumer);
    return {name + " is installed at " + r.path + " (" + env.owner_label(r.path) +
                "), where the loader does not look for " + fs::path(consumer.path).filename().string() + " (" +
                (looked.empty() ? "it has no RPATH or RUNPATH" : looked) +
                "); it loads only if something else loads that copy first",
            ""};
  }
  return {};
}

// The one CUDA major the consumer's package is built for, from what its ELF files need (cupy-cuda12x
// needs libcublas.so.12, which only CUDA 12 ships); 0 when none or several.
int consumer_cuda_major(const Environment& env, const Knowledge& knowledge, const python::Distribution* consumer) {
  if (!consumer) return 0;
  std::set<int> majors;
  for (const ElfRecord& r : env.elf_files) {
    if (!r.opened->elf || std::find(r.owners.begin(), r.owners.end(), consumer) == r.owners.end()) continue;
    for (std::string_view needed : r.opened->elf->needed) {
      std::set<int> of_name;
      for (const KnownLibrary* k : knowledge.providers(needed))
        if (k->cuda) of_name.insert(k->cuda);
      if (of_name.size() == 1) majors.insert(*of_name.begin());
    }
  }
  return majors.size() == 1 ? *majors.begin() : 0;
}

}  // namespace

Fix hint_known_providers(const Environment& env, const Knowledge& knowledge, const std::string& name,
                         const python::Distribution* consumer) {
  auto providers = knowledge.providers(name);
  if (providers.empty()) return {};
  std::string names;
  for (const KnownLibrary* k : providers) {
    if (!names.empty()) names += " or ";
    names += k->package + (k->cuda == 0 ? "" : " (CUDA " + std::to_string(k->cuda) + ")");
  }
  const KnownLibrary* pick = providers.front();
  // libcusolver.so.11 is CUDA 11's and CUDA 12's: the consumer's own major decides.
  if (int major = consumer_cuda_major(env, knowledge, consumer))
    for (const KnownLibrary* k : providers)
      if (k->cuda == major) pick = k;
  for (const KnownLibrary* k : providers)
    if (env.inventory.find(k->package)) pick = k;  // one is installed: its file is what is missing
  // The knowledge table names packages of the public index.
  std::string command = index_install(env, consumer, pick->package, false);
  if (command.empty())  // a Debian or conda package: pip's wheel is not for it
    return {name + " is shipped by " + names + " on PyPI; " + consumer->name + " was installed by " +
                consumer->installer + ", so install the library with " + consumer->installer + "'s tools",
            ""};
  return {name + " is shipped by " + names, command};
}

namespace {

// The file is there, shipped by a Debian package, outside the ELF index (python3-torch's
// torch/lib/libc10.so is a link into /usr/lib): name the package and the file, as dpkg lists them.
Fix hint_debian_file(const Environment& env, const std::string& name, const loader::LoadedObject& consumer) {
  if (!env.dpkg) return {};
  for (const auto& [path, package] : env.dpkg->files_named(name)) {
    if (!env.files.exists(path)) continue;
    std::string looked = where_looked(env, consumer);
    return {name + " is " + path + ", shipped by the Debian package " + package.name +
                (package.version.empty() ? "" : " " + package.version) + ", where the loader does not look for " +
                fs::path(consumer.path).filename().string() + " (" +
                (looked.empty() ? "it has no RPATH or RUNPATH" : looked) +
                "); it loads only if something else loads that copy first: import the package that loads it first, "
                "or install the build of " +
                fs::path(consumer.path).filename().string() + " made for that copy",
            ""};
  }
  return {};
}

}  // namespace

Fix fix_missing_library(const Environment& env, const Knowledge& knowledge, const LoadFailure& l) {
  const LoadError& e = l.error;
  const loader::LoadedObject& consumer = *l.consumer;
  // A package that still lists the file is the one to reinstall, whatever removed it.
  if (Fix a = hint_lost_file(env, e.library); !a.hint.empty()) return a;
  if (Fix a = hint_from_requirements(env, knowledge, consumer, e.library, true); !a.hint.empty()) return a;
  if (Fix a = hint_elsewhere(env, e.library, consumer); !a.hint.empty()) return a;
  if (Fix a = hint_known_providers(env, knowledge, e.library, env.owner(consumer.path)); !a.hint.empty()) return a;
  if (Fix a = hint_from_requirements(env, knowledge, consumer, e.library, false); !a.hint.empty()) return a;
  if (Fix a = hint_debian_file(env, e.library, consumer); !a.hint.empty()) return a;
  std::string looked = where_looked(env, consumer);
  return {"no installed package provides " + e.library + (looked.empty() ? "" : "; " + looked) +
              ": install the package (or system library) that ships it",
          ""};
}

}  // namespace envdoctor::advice
