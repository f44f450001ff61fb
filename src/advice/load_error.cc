#include "advice/load_error.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "advice/install.h"
#include "imports/python_process.h"
#include "python/metadata_file.h"
#include "python/version.h"

namespace envdoctor::advice {

namespace fs = std::filesystem;
using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::KnownLibrary;
using environment::normalize_path;
using loader::LoadError;

namespace {

std::string demangle(const std::string& symbol) {
  // Only Itanium-mangled names: a C function called `f` is not the type float.
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string describe(const python::Distribution* d) { return d ? d->name + " " + d->version : "no package"; }

// "faketorch 2.8.0", or the file's name when no package owns it.
std::string consumer_name_of(const Environment& env, const loader::LoadedObject& consumer) {
  const python::Distribution* own = env.owner(consumer.path);
  return own ? describe(own) : fs::path(consumer.path).filename().string();
}

// A package lists a file of this name in its RECORD, but the file is gone: the usual aftermath
// of uninstalling one of two wheels that installed the same path.
Fix hint_lost_file(const Environment& env, const std::string& name) {
  for (const python::Distribution& d : env.inventory.distributions) {
    for (const python::RecordEntry& e : d.record) {
      if (e.resolved.filename() != name) continue;
      if (env.files.exists(e.resolved.string())) continue;
      Fix fix = reinstall(env, d);
      return {d.name + " lists " + e.path +
                  " but the file is gone (another package that installed the same path was uninstalled, or it was "
                  "deleted); " +
                  fix.hint,
              fix.command};
    }
  }
  return {};
}

// The directories `consumer`'s RUNPATH (or RPATH) names, as written but with "$ORIGIN/" left
// out and made lexically normal: "../provlib/lib" for "$ORIGIN/../provlib/lib".
std::string search_dirs(const loader::LoadedObject& consumer) {
  if (!consumer.elf) return "";
  std::optional<std::string_view> list = consumer.elf->runpath ? consumer.elf->runpath : consumer.elf->rpath;
  if (!list) return "";
  std::string out;
  std::string_view rest = *list;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    for (std::string origin : {"$ORIGIN/", "${ORIGIN}/"})
      if (dir.rfind(origin, 0) == 0) dir = fs::path(dir.substr(origin.size())).lexically_normal().string();
    if (dir == "$ORIGIN" || dir == "${ORIGIN}") dir = ".";
    if (!dir.empty()) out += (out.empty() ? "" : ", ") + dir;
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  return out;
}

// "consumer looks for it in ../provlib/lib"; "" without a RUNPATH or RPATH.
std::string where_looked(const Environment& env, const loader::LoadedObject& consumer) {
  std::string dirs = search_dirs(consumer);
  if (dirs.empty()) return "";
  const python::Distribution* own = env.owner(consumer.path);
  return (own ? own->name : fs::path(consumer.path).filename().string()) + " looks for it in " + dirs;
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
      if (e.resolved.filename() == name) return &d;
  return nullptr;
}

// The requirement of `consumer` on distribution `name`, when it has one that applies here.
std::optional<python::Requirement> requirement_on(const Environment& env, const python::Distribution& consumer,
                                                  const std::string& name) {
  for (const python::Requirement& r : consumer.requirements_for(env.python.markers))
    if (python::normalize_name(r.name) == python::normalize_name(name)) return r;
  return std::nullopt;
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
    bool match = fs::path(r.path).filename() == name ||
                 (r.opened->elf && r.opened->elf->soname && *r.opened->elf->soname == name);
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

Fix hint_missing_library(const Environment& env, const Knowledge& knowledge, const loader::Process& p,
                         const LoadError& e) {
  const loader::LoadedObject& consumer = p.objects()[e.object];
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

// Whether `elf` defines `symbol` (of version `version` when one is given) for the loader to bind.
bool defines_symbol(const elf::ElfFile& elf, const std::string& symbol, const std::string& version) {
  for (u32 i : elf.find_symbols(symbol)) {
    auto sym = elf.symbol(i);
    if (!sym || !sym->defined() || sym->bind == STB_LOCAL) continue;
    if (version.empty() || !sym->versym) return true;
    const elf::VersionDef* def = elf.verdef_for(*sym->versym & 0x7fff);
    if (def && def->name == version) return true;
  }
  return false;
}

// "found by RUNPATH in /v/site/nvidia/nccl/lib": how the loader came to take `o`.
std::string how_found(const loader::LoadedObject& o) {
  std::string out = std::string("found by ") + loader::rule_name(o.rule);
  if (!o.source.empty() && o.rule != loader::Rule::kLdSoCache) out += " in " + o.source;
  return out;
}

// The distributions whose requirements (for this interpreter) name `dist`.
std::vector<const python::Distribution*> required_by(const Environment& env, const python::Distribution& dist) {
  std::vector<const python::Distribution*> out;
  for (const python::Distribution& d : env.inventory.distributions)
    if (&d != &dist && requirement_on(env, d, dist.name)) out.push_back(&d);
  return out;
}

// One SONAME, two copies (nvidia-nccl-cu12 and nvidia-nccl-cu13 both ship libnccl.so.2): the
// copy that wins serves every object of the process, and a symbol that only the other copy
// defines is undefined. Says which copy won and by which rule and directory, which copy defines
// the symbol and which package owns it, and the fix: uninstall the winner's package when nothing
// requires it, else load the right copy first.
Fix hint_other_copy(const Environment& env, const loader::Process& p, const LoadError& e) {
  const loader::LoadedObject& consumer = p.objects()[e.object];
  std::string consumer_name = fs::path(consumer.path).filename().string();
  for (const loader::Resolution& r : consumer.deps) {
    if (r.object < 0) continue;
    const loader::LoadedObject& won = p.objects()[r.object];
    if (!won.elf || !won.elf->soname) continue;
    std::string soname(*won.elf->soname);
    std::string won_path = normalize_path(won.path);
    for (const ElfRecord& copy : env.elf_files) {
      const auto& elf = copy.opened->elf;
      if (!elf || !elf->soname || *elf->soname != soname || normalize_path(copy.path) == won_path) continue;
      if (copy.opened->id == won.id || !defines_symbol(*elf, e.symbol, e.version)) continue;
      const python::Distribution* winner = env.owner(won_path);
      const python::Distribution* right = env.owner(copy.path);
      std::string h = e.symbol + (e.version.empty() ? "" : " (version " + e.version + ")") +
                      " is defined by another copy of " + soname + ": " + copy.path + " (" +
                      env.owner_label(copy.path) + "); the copy that serves the process is " + won_path + " (" +
                      env.owner_label(won_path) + "), " + how_found(won);
      if (r.rule == loader::Rule::kLoaded)
        h += ", and matched by its SONAME when " + consumer_name + " asked for " + r.name;
      std::string command;
      std::vector<const python::Distribution*> needers = winner ? required_by(env, *winner) : decltype(needers){};
      // Both copies one package's (a glibc-hwcaps build beside the baseline one), or the winner the
      // consumer's own package: uninstalling it removes what it would fix.
      if (winner && (winner == right || winner == env.owner(consumer.path))) {
        h += "; both are " + winner->name + "'s own, so no uninstall can help: the copy ld.so prefers here is " +
             "a broken build of it (tell its maintainers); until a fixed release, load the other copy first (" +
             "LD_PRELOAD=" + shell_word(copy.path) + ")";
        return {h, ""};
      }
      if (winner && needers.empty()) command = uninstall_command(env, *winner);
      if (!command.empty()) {
        h += "; uninstall " + winner->name + " (nothing installed requires it)" +
             (right ? ", so that " + right->name + "'s copy is the one found" : "");
      } else {
        if (winner && !needers.empty()) h += "; " + winner->name + " is required by " + needers.front()->name;
        h += "; make the right copy win: load it first (LD_PRELOAD=" + shell_word(copy.path) +
             ") or put its directory before " + won.source + " on " + consumer_name + "'s search path";
      }
      return {h, command};
    }
  }
  return {};
}

// A C++ function's name as demangled, up to its parameter list ("c10::Error::Error").
std::string qualified_name(const std::string& demangled) {
  int depth = 0;
  for (size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (c == '(' && depth == 0 && i > 0) return demangled.substr(0, i);
  }
  return demangled;
}

// The last component of a qualified name ("Error" of "c10::Error::Error"), for a cheap filter
// of the provider's symbols before demangling them.
std::string last_component(const std::string& qualified) {
  size_t colon = qualified.rfind("::");
  std::string last = colon == std::string::npos ? qualified : qualified.substr(colon + 2);
  size_t angle = last.find('<');
  return angle == std::string::npos ? last : last.substr(0, angle);
}

// The C++ ABI's two std::strings spelt alike: GCC 5's dual ABI puts the new std::string (and
// std::list) in the inline namespace std::__cxx11, and the old one mangles as `Ss`
// (`_GLIBCXX_USE_CXX11_ABI`, libstdc++'s "Dual ABI" page). Equal after this, and unequal before,
// means the same function built with the other ABI.
std::string without_abi(std::string s) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  };
  replace_all("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string");
  replace_all("std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string");
  replace_all("std::__cxx11::", "std::");
  return s;
}

// What the consumer's undefined C++ symbol is in the libraries it links: the same function built
// with the other C++ ABI, or another signature of it. Empty when no linked library has a function
// of that name.
struct OtherSignature {
  const python::Distribution* provider = nullptr;
  std::string path;
  std::string demangled;
  bool abi_flip = false;  // the same function, with the other std::string
};
std::optional<OtherSignature> other_signature(const Environment& env, const loader::Process& p, const LoadError& e) {
  if (e.symbol.rfind("_Z", 0) != 0) return std::nullopt;
  std::string wanted = demangle(e.symbol);
  if (wanted == e.symbol) return std::nullopt;
  std::string name = qualified_name(wanted);
  std::string last = last_component(name);
  const loader::LoadedObject& consumer = p.objects()[e.object];
  std::optional<OtherSignature> other;
  for (const loader::Resolution& r : consumer.deps) {
    if (r.object < 0 || !p.objects()[r.object].elf) continue;
    const elf::ElfFile& elf = *p.objects()[r.object].elf;
    for (u32 i = 1; i < elf.symbol_count(); ++i) {
      auto sym = elf.symbol(i);
      if (!sym || !sym->defined() || sym->bind == STB_LOCAL || !sym->name.starts_with("_Z")) continue;
      if (sym->name.find(last) == std::string_view::npos) continue;
      std::string candidate = demangle(std::string(sym->name));
      if (qualified_name(candidate) != name) continue;
      bool flip = without_abi(candidate) == without_abi(wanted);
      if (other && (other->abi_flip || !flip)) continue;
      other = OtherSignature{env.owner(p.objects()[r.object].path), p.objects()[r.object].path, candidate, flip};
    }
  }
  return other;
}

// The torch release a build of an extension names in its version or wheel file name
// (flash-attn's `2.8.3+cu12torch2.8cxx11abiFALSE`): "2.8"; "" when neither says.
std::string built_for_torch(const python::Distribution& d) {
  for (std::string text : {d.version, fs::path(d.origin.url).filename().string()}) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = text.find("torch");
    if (at == std::string::npos) continue;
    size_t end = at + 5;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
    std::string v = text.substr(at + 5, end - at - 5);
    while (!v.empty() && v.back() == '.') v.pop_back();
    if (!v.empty()) return v;
  }
  return "";
}

// The old and the new C++ ABI: the consumer asks for the function with one std::string and its
// provider exports it with the other (torch builds with the new ABI since 2.6; a wheel marked
// cxx11abiFALSE asks for `Ss`).
Fix hint_cxx_abi(const Environment& env, const loader::Process& p, const LoadError& e) {
  std::optional<OtherSignature> other = other_signature(env, p, e);
  if (!other || !other->abi_flip) return {};
  const python::Distribution* own = env.owner(p.objects()[e.object].path);
  std::string consumer_name = own ? describe(own) : fs::path(p.objects()[e.object].path).filename().string();
  std::string provider = other->provider ? describe(other->provider) : other->path;
  bool old = other->demangled.find("__cxx11") != std::string::npos;
  return {consumer_name + " was built with the " + (old ? "old" : "new") +
              " C++ ABI (`_GLIBCXX_USE_CXX11_ABI=" + (old ? "0" : "1") + "`): it asks for " + demangle(e.symbol) +
              "; " + provider + " exports the " + (old ? "new" : "old") + " one (" + other->demangled +
              "): install the build marked cxx11abi" + (old ? "TRUE" : "FALSE") + (own ? " of " + own->name : ""),
          ""};
}

// What the provider does have, when it says why the symbol is missing: another signature of the
// same function (an extension built against another torch: the torch its version names), or
// the version node the reference names without the symbol (symbols are added under an unchanged
// node in later minor releases: `cudaGetDriverEntryPointByVersion, version libcudart.so.12`).
std::string what_is_known(const Environment& env, const loader::Process& p, const LoadError& e,
                          const python::Distribution* own) {
  std::string out;
  if (std::optional<OtherSignature> other = other_signature(env, p, e)) {
    out += "; " + (other->provider ? describe(other->provider) : other->path) + " exports " +
           qualified_name(other->demangled) + " only in another signature, " + other->demangled;
    std::string torch = own ? built_for_torch(*own) : "";
    if (!torch.empty() && other->provider)
      out += "; " + own->name + " " + own->version + " says it was built against torch " + torch +
             (other->provider->key() == "torch" ? ", and torch " + other->provider->version + " is installed" : "");
  }
  if (e.version.empty()) return out;
  const loader::LoadedObject& consumer = p.objects()[e.object];
  for (const loader::Resolution& r : consumer.deps) {
    if (r.object < 0 || !p.objects()[r.object].elf) continue;
    const loader::LoadedObject& provider = p.objects()[r.object];
    bool has_node = std::any_of(provider.elf->verdef.begin(), provider.elf->verdef.end(),
                                [&](const elf::VersionDef& d) { return d.name == e.version; });
    if (!has_node) continue;
    const python::Distribution* d = env.owner(provider.path);
    out += "; " + provider.path + " (" + env.owner_label(provider.path) + ") has version " + e.version + " but not " +
           e.symbol +
           ": a library adds symbols under an unchanged version node in later minor "
           "releases, so " +
           (d ? d->name + " " + d->version : std::string("this copy")) + " is older than the release " +
           consumer_name_of(env, consumer) + " was built against";
    break;
  }
  return out;
}

// Where the symbol was looked for (the consumer's own libraries from other packages), what each
// lacks, the versions involved, and both ways out: a newer provider, or a consumer built for the
// installed one.
Fix hint_undefined_symbol(const Environment& env, const loader::Process& p, const LoadError& e) {
  const loader::LoadedObject& consumer = p.objects()[e.object];
  const python::Distribution* own = env.owner(consumer.path);
  std::string what = demangle(e.symbol);
  const python::Distribution* provider = nullptr;
  std::string searched;
  for (const loader::Resolution& r : consumer.deps) {
    if (r.object < 0) continue;
    const python::Distribution* d = env.owner(p.objects()[r.object].path);
    if (!d || d == own) continue;
    if (!provider) provider = d;
    searched += (searched.empty() ? "" : ", ") + r.name + " (" + describe(d) + ")";
  }
  std::string consumer_name = own ? describe(own) : fs::path(consumer.path).filename().string();
  if (!provider)
    return {what + " is defined by no library loaded with " + fs::path(consumer.path).filename().string() +
                ": the library that should define it is older or newer than the one " + consumer_name +
                " was built against",
            ""};
  std::string h = what + " is not in " + searched + ", which " + consumer_name + " links";
  h += what_is_known(env, p, e, own);
  std::optional<python::Requirement> req = own ? requirement_on(env, *own, provider->name) : std::nullopt;
  bool pinned = req && !req->specifier.empty();
  bool ok = true;  // the installed provider meets the consumer's requirement
  if (pinned) {
    if (auto clauses = python::parse_specifier(req->specifier))
      for (const python::SpecifierClause& c : *clauses) ok &= python::satisfies(provider->version, c);
    h += "; " + own->name + " requires " + req->name + req->specifier +
         (ok ? " and " + provider->version + " is accepted" : ", not " + provider->version);
  } else {
    h += "; " + consumer_name + " was built against another " + provider->name;
  }
  // Way one: a newer provider, from where the provider came. The command asks for a release newer
  // than the installed one (and within the consumer's requirement), so that where the index has
  // none, pip fails instead of reporting success and changing nothing.
  std::string upgrade;
  std::string test_wheel = "`envdoctor check --python " + shell_word(environment_python(env)) + " --with WHEEL`";
  if (provider->origin.kind == python::DirectUrl::kNone) {
    std::string spec = pinned && !ok ? req->name + req->specifier
                                     : provider->name + (pinned ? req->specifier + "," : "") + ">" + provider->version;
    upgrade = index_install(env, provider, spec, true);
  }
  h += "; either upgrade " + provider->name + (upgrade.empty() ? " (test a wheel with " + test_wheel + ")" : "");
  // Way two: a build of the consumer made for the installed provider.
  h += "; or install a build of " + (own ? own->name : consumer_name) + " made for " + describe(provider) +
       " (test it with " + test_wheel + ")";
  return {h, upgrade};
}

// A provider found on LD_LIBRARY_PATH that lacks what `e` needs (a version node, or a symbol of a
// version it has: `undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12`),
// where the consumer's own search finds a copy that has it once LD_LIBRARY_PATH is out of the
// way. glibc searches an object's DT_RPATH (and its loaders'), then LD_LIBRARY_PATH, then its
// DT_RUNPATH (elf/dl-load.c: _dl_map_object), so a directory on LD_LIBRARY_PATH shadows a
// wheel's copy for every object that finds its libraries by RUNPATH, and for none that uses
// RPATH. Whether unsetting helps is not guessed: the consumer is loaded again, into a process
// of the same interpreter without LD_LIBRARY_PATH, and that load must not fail this way.
// Empty advice when the provider was not found on LD_LIBRARY_PATH or unsetting would not help.
Fix hint_ld_library_path_shadow(const Environment& env, const loader::Process& p, const LoadError& e) {
  if (p.config().ld_library_path.empty() || e.object < 0) return {};
  const loader::LoadedObject& consumer = p.objects()[e.object];
  struct Shadow {
    size_t dep;  // index in consumer.deps
    const loader::LoadedObject* copy;
  };
  std::vector<Shadow> shadows;
  for (size_t k = 0; k < consumer.deps.size(); ++k) {
    const loader::Resolution& r = consumer.deps[k];
    if (r.object < 0) continue;
    const loader::LoadedObject& target = p.objects()[r.object];
    if (target.rule != loader::Rule::kLdLibraryPath) continue;
    // A missing version names its provider; a symbol may be any dependency's.
    if (e.kind == LoadError::Kind::kMissingVersion && target.path != e.library) continue;
    shadows.push_back({k, &target});
  }
  if (shadows.empty()) return {};

  loader::LoaderConfig without = p.config();
  without.ld_library_path.clear();
  imports::ImportModel::Interpreter python = imports::ImportModel::start_in(env, without);
  loader::Process& q = python.process;
  loader::Process::DlopenResult again = q.dlopen(consumer.path, false, python.loaded ? python.caller : -1);
  if (again.object < 0 && again.new_objects.empty()) return {};
  for (const LoadError& other : again.errors)
    if (other.kind == e.kind && other.symbol == e.symbol && other.version == e.version) return {};
  const loader::LoadedObject& reloaded = q.objects()[again.object >= 0 ? again.object : again.new_objects.front()];

  const Shadow& s = shadows.front();
  const loader::Resolution& own = reloaded.deps.size() > s.dep ? reloaded.deps[s.dep] : loader::Resolution{};
  std::string lib = consumer.deps[s.dep].name;
  std::string what = e.kind == LoadError::Kind::kMissingVersion ? "version " + e.version
                     : e.version.empty()                        ? "symbol " + e.symbol
                                                                : "symbol " + e.symbol + " of version " + e.version;
  std::string consumer_name = fs::path(consumer.path).filename().string();
  std::string h = "LD_LIBRARY_PATH puts " + s.copy->source + " first: the loader searches LD_LIBRARY_PATH before " +
                  consumer_name + "'s " + (consumer.elf && consumer.elf->runpath ? "RUNPATH" : "default directories") +
                  ", so " + lib + " is " + s.copy->path + " (" + env.owner_label(s.copy->path) + "), which lacks " +
                  what;
  if (own.object >= 0) {
    const std::string& path = q.objects()[own.object].path;
    h += "; without LD_LIBRARY_PATH " + consumer_name + " loads " + path + " (" + env.owner_label(path) +
         ", found by " + loader::rule_name(own.rule) + "), which has it";
  }
  // The fix: LD_LIBRARY_PATH without the directory that shadows (glibc splits it on ':' and ';').
  std::string rest;
  for (const std::string& dir : loader::split_search_path(p.config().ld_library_path, ":;", std::nullopt, without))
    if (dir != s.copy->source) rest += (rest.empty() ? "" : ":") + dir;
  h += "; take " + s.copy->source + " off LD_LIBRARY_PATH" + (rest.empty() ? " (unset it)" : "") +
       ", or align the copies: replace " + s.copy->path + " with a release of " + lib + " that provides " + what;
  return {h, rest.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + shell_word(rest)};
}

}  // namespace

Fix fix_for_load_error(const Environment& env, const Knowledge& knowledge, const loader::Process& p,
                       const LoadError& e) {
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
      if (e.object >= 0) return hint_missing_library(env, knowledge, p, e);
      return {};
    case LoadError::Kind::kWrongElfClass:
      return {"only a copy of " + e.library + " for the other ELF class was found: install the " +
                  (p.objects().empty() || !p.objects()[0].elf || p.objects()[0].elf->is_64() ? "64" : "32") +
                  "-bit one",
              ""};
    case LoadError::Kind::kInvalidElf: return invalid_file(env, normalize_path(e.path));
    case LoadError::Kind::kMissingVersion:
      if (Fix f = hint_ld_library_path_shadow(env, p, e); !f.hint.empty()) return f;
      return {hint_missing_version(env, knowledge, p, e), ""};
    case LoadError::Kind::kUndefinedSymbol:
      if (Fix f = hint_ld_library_path_shadow(env, p, e); !f.hint.empty()) return f;
      if (e.object < 0) return {};
      if (Fix f = hint_other_copy(env, p, e); !f.hint.empty()) return f;
      if (Fix f = hint_cxx_abi(env, p, e); !f.hint.empty()) return f;
      return hint_undefined_symbol(env, p, e);
      return {};
  }
  return {};
}

}  // namespace envdoctor::advice
