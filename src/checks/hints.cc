#include "checks/hints.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

namespace envdoctor::checks {

namespace fs = std::filesystem;
using loader::LoadError;

namespace {

// A word for a POSIX shell: as it is when nothing in it is special, else single-quoted.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("/._-+=:,@%").find(c) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string reinstall_command(const Environment& env, const python::Distribution& dist) {
  const std::string& installer = dist.installer;
  if (installer == "debian") return "apt-get install --reinstall " + shell_word(dist.installer_package);
  if (installer == "conda") {
    bool own = dist.installer_package.empty();
    std::string prefix = env.python.prefix.empty() ? dist.site_dir.string() : env.python.prefix;
    return "conda install -p " + shell_word(prefix) + " --force-reinstall " +
           shell_word((own ? dist.name : dist.installer_package) + "=" + (own ? dist.version : dist.installer_version));
  }
  std::string pin = shell_word(dist.name + "==" + dist.version);
  if (installer == "uv") {
    std::string python = env.python.executable.empty() ? env.python.prefix : env.python.executable;
    return "uv pip install --python " + shell_word(python) + " --reinstall --no-deps " + pin;
  }
  if (installer.empty() || installer == "pip") return "pip install --force-reinstall --no-deps " + pin;
  return "reinstall " + pin + " with " + installer + ", which installed it";
}

std::string demangle(const std::string& symbol) {
  // Only Itanium-mangled names: a C function called `f` is not the type float.
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

namespace {

std::string describe(const python::Distribution* d) { return d ? d->name + " " + d->version : "no package"; }

// A package lists a file of this name in its RECORD, but the file is gone: the usual aftermath
// of uninstalling one of two wheels that installed the same path.
std::string hint_lost_file(const Environment& env, const std::string& name) {
  for (const python::Distribution& d : env.inventory.distributions) {
    for (const python::RecordEntry& e : d.record) {
      if (e.resolved.filename() != name) continue;
      if (env.files.stat(e.resolved.string())) continue;
      return d.name + " lists " + e.path +
             " but the file is gone (another package that installed the same path was "
             "uninstalled, or it was deleted): " +
             reinstall_command(env, d);
    }
  }
  return "";
}

// A copy exists in the environment, just not where the loader looks for this consumer.
std::string hint_elsewhere(const Environment& env, const std::string& name, const loader::LoadedObject& consumer) {
  for (const ElfRecord& r : env.elf_files) {
    bool match = fs::path(r.path).filename() == name ||
                 (r.opened->elf && r.opened->elf->soname && *r.opened->elf->soname == name);
    if (!match) continue;
    std::string paths;
    if (consumer.elf && consumer.elf->runpath) paths = "its RUNPATH is " + std::string(*consumer.elf->runpath);
    else if (consumer.elf && consumer.elf->rpath) paths = "its RPATH is " + std::string(*consumer.elf->rpath);
    else paths = "it has no RPATH or RUNPATH";
    return name + " is installed at " + r.path + " (" + env.owner_label(r.path) +
           "), where the loader does not look for " + consumer.path + " (" + paths +
           "); it loads only if something else loads that copy first";
  }
  return "";
}

std::string hint_known_providers(const Environment& env, const Knowledge& knowledge, const std::string& name) {
  auto providers = knowledge.providers(name);
  if (providers.empty()) return "";
  std::string names;
  for (const KnownLibrary* k : providers) {
    if (!names.empty()) names += " or ";
    names += k->package + (k->cuda == 0 ? "" : " (CUDA " + std::to_string(k->cuda) + ")");
  }
  const KnownLibrary* pick = providers.front();
  for (const KnownLibrary* k : providers)
    if (env.inventory.find(k->package)) pick = k;  // one is installed: its file is what is missing
  return name + " is shipped by " + names + ": pip install " + pick->package;
}

std::string hint_missing_library(const Environment& env, const Knowledge& knowledge, const loader::Process& p,
                                 const LoadError& e) {
  if (std::string h = hint_lost_file(env, e.library); !h.empty()) return h;
  if (std::string h = hint_elsewhere(env, e.library, p.objects()[e.object]); !h.empty()) return h;
  if (std::string h = hint_known_providers(env, knowledge, e.library); !h.empty()) return h;
  return "no installed package provides " + e.library + ": install the package (or system library) that ships it";
}

std::string hint_missing_version(const Environment& env, const Knowledge& knowledge, const loader::Process& p,
                                 const LoadError& e) {
  const loader::LoadedObject& consumer = p.objects()[e.object];
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
    if (std::string k = hint_known_providers(env, knowledge, wanted); !k.empty()) h += "; " + k;
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

std::string hint_undefined_symbol(const Environment& env, const loader::Process& p, const LoadError& e) {
  const loader::LoadedObject& consumer = p.objects()[e.object];
  const python::Distribution* own = env.owner(consumer.path);
  std::set<std::string> others;
  for (const loader::Resolution& r : consumer.deps) {
    if (r.object < 0) continue;
    const python::Distribution* d = env.owner(p.objects()[r.object].path);
    if (d && d != own) others.insert(d->name + " " + d->version);
  }
  std::string what = demangle(e.symbol);
  std::string h = what + " is defined by no library loaded with " + fs::path(consumer.path).filename().string();
  if (!others.empty()) {
    std::string list;
    for (const std::string& o : others) list += (list.empty() ? "" : ", ") + o;
    h += ": " + describe(own) + " was built against another version of " + list + "; install the build of " +
         (own ? own->name : consumer.path) + " made for the installed " + list + " (or the version it was built for)";
  } else {
    h += ": the library that should define it is older or newer than the one " + describe(own) + " was built against";
  }
  return h;
}

}  // namespace

std::string hint_for_invalid_file(const Environment& env, const std::string& path) {
  if (const python::Distribution* d = env.owner(path))
    return path + " is not a loadable ELF file (truncated or damaged): " + reinstall_command(env, *d);
  return path + " is not a loadable ELF file (truncated or damaged): replace it";
}

namespace {

Code code_for(LoadError::Kind kind) {
  switch (kind) {
    case LoadError::Kind::kMissingLibrary: return Code::kMissingLibrary;
    case LoadError::Kind::kMissingVersion: return Code::kMissingVersion;
    case LoadError::Kind::kUndefinedSymbol: return Code::kUndefinedSymbol;
    case LoadError::Kind::kWrongElfClass: return Code::kWrongElfClass;
    case LoadError::Kind::kInvalidElf: return Code::kInvalidElf;
  }
  return Code::kInvalidElf;
}

}  // namespace

Finding finding_for_load_error(const Environment& env, const Knowledge& knowledge, const loader::Process& p,
                               const LoadError& e) {
  Finding f;
  f.code = code_for(e.kind);
  f.severity = Severity::kError;
  f.message = e.message;
  std::string consumer = e.path;
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
      f.library = e.library;
      f.hint = e.object >= 0 ? hint_missing_library(env, knowledge, p, e) : "";
      break;
    case LoadError::Kind::kWrongElfClass:
      f.library = e.library;
      f.hint = "only a copy of " + e.library + " for the other ELF class was found: install the " +
               (p.objects().empty() || !p.objects()[0].elf || p.objects()[0].elf->is_64() ? "64" : "32") + "-bit one";
      break;
    case LoadError::Kind::kInvalidElf:
      f.library = e.library;
      consumer = e.path;
      f.hint = hint_for_invalid_file(env, normalize_path(e.path));
      break;
    case LoadError::Kind::kMissingVersion:
      f.library = fs::path(e.library).filename().string();
      f.version = e.version;
      f.hint = hint_missing_version(env, knowledge, p, e);
      break;
    case LoadError::Kind::kUndefinedSymbol:
      f.symbol = e.symbol;
      if (!e.version.empty()) f.version = e.version;
      f.hint = hint_undefined_symbol(env, p, e);
      break;
  }
  f.file = normalize_path(consumer);
  const auto& owners = env.owners(f.file);
  if (!owners.empty()) f.package = owners.front()->name;
  if (owners.size() > 1)
    for (const python::Distribution* d : owners) f.packages.push_back(d->name);
  return f;
}

}  // namespace envdoctor::checks
