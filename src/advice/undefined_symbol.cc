#include <algorithm>
#include <cctype>
#include <filesystem>

#include "advice/install.h"
#include "advice/load_error_kinds.h"
#include "python/version.h"

namespace envdoctor::advice {

namespace fs = std::filesystem;
using environment::ElfRecord;
using environment::Environment;
using environment::normalize_path;
using loader::LoadError;

namespace {

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
Fix hint_other_copy(const Environment& env, const LoadFailure& l) {
  const LoadError& e = l.error;
  const loader::LoadedObject& consumer = *l.consumer;
  std::string consumer_name = fs::path(consumer.path).filename().string();
  for (size_t k = 0; k < consumer.deps.size(); ++k) {
    const loader::Resolution& r = consumer.deps[k];
    if (!l.deps[k]) continue;
    const loader::LoadedObject& won = *l.deps[k];
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
std::optional<OtherSignature> other_signature(const Environment& env, const LoadFailure& l) {
  const LoadError& e = l.error;
  if (e.symbol.rfind("_Z", 0) != 0) return std::nullopt;
  std::string wanted = demangle(e.symbol);
  if (wanted == e.symbol) return std::nullopt;
  std::string name = qualified_name(wanted);
  std::string last = last_component(name);
  std::optional<OtherSignature> other;
  for (const std::optional<loader::LoadedObject>& dep : l.deps) {
    if (!dep || !dep->elf) continue;
    const elf::ElfFile& elf = *dep->elf;
    for (u32 i = 1; i < elf.symbol_count(); ++i) {
      auto sym = elf.symbol(i);
      if (!sym || !sym->defined() || sym->bind == STB_LOCAL || !sym->name.starts_with("_Z")) continue;
      if (sym->name.find(last) == std::string_view::npos) continue;
      std::string candidate = demangle(std::string(sym->name));
      if (qualified_name(candidate) != name) continue;
      bool flip = without_abi(candidate) == without_abi(wanted);
      if (other && (other->abi_flip || !flip)) continue;
      other = OtherSignature{env.owner(dep->path), dep->path, candidate, flip};
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
Fix hint_cxx_abi(const Environment& env, const LoadFailure& l) {
  const LoadError& e = l.error;
  std::optional<OtherSignature> other = other_signature(env, l);
  if (!other || !other->abi_flip) return {};
  const python::Distribution* own = env.owner(l.consumer->path);
  std::string consumer_name = own ? describe(own) : fs::path(l.consumer->path).filename().string();
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
std::string what_is_known(const Environment& env, const LoadFailure& l, const python::Distribution* own) {
  const LoadError& e = l.error;
  std::string out;
  if (std::optional<OtherSignature> other = other_signature(env, l)) {
    out += "; " + (other->provider ? describe(other->provider) : other->path) + " exports " +
           qualified_name(other->demangled) + " only in another signature, " + other->demangled;
    std::string torch = own ? built_for_torch(*own) : "";
    if (!torch.empty() && other->provider)
      out += "; " + own->name + " " + own->version + " says it was built against torch " + torch +
             (other->provider->key() == "torch" ? ", and torch " + other->provider->version + " is installed" : "");
  }
  if (e.version.empty()) return out;
  for (const std::optional<loader::LoadedObject>& dep : l.deps) {
    if (!dep || !dep->elf) continue;
    const loader::LoadedObject& provider = *dep;
    bool has_node = std::any_of(provider.elf->verdef.begin(), provider.elf->verdef.end(),
                                [&](const elf::VersionDef& d) { return d.name == e.version; });
    if (!has_node) continue;
    const python::Distribution* d = env.owner(provider.path);
    out += "; " + provider.path + " (" + env.owner_label(provider.path) + ") has version " + e.version + " but not " +
           e.symbol +
           ": a library adds symbols under an unchanged version node in later minor "
           "releases, so " +
           (d ? d->name + " " + d->version : std::string("this copy")) + " is older than the release " +
           consumer_name_of(env, *l.consumer) + " was built against";
    break;
  }
  return out;
}

// Where the symbol was looked for (the consumer's own libraries from other packages), what each
// lacks, the versions involved, and both ways out: a newer provider, or a consumer built for the
// installed one.
Fix hint_undefined_symbol(const Environment& env, const LoadFailure& l) {
  const LoadError& e = l.error;
  const loader::LoadedObject& consumer = *l.consumer;
  const python::Distribution* own = env.owner(consumer.path);
  std::string what = demangle(e.symbol);
  const python::Distribution* provider = nullptr;
  std::string searched;
  for (size_t k = 0; k < consumer.deps.size(); ++k) {
    const loader::Resolution& r = consumer.deps[k];
    if (!l.deps[k]) continue;
    const python::Distribution* d = env.owner(l.deps[k]->path);
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
  h += what_is_known(env, l, own);
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

}  // namespace

Fix fix_undefined_symbol(const Environment& env, const LoadFailure& l) {
  if (Fix f = hint_other_copy(env, l); !f.hint.empty()) return f;
  if (Fix f = hint_cxx_abi(env, l); !f.hint.empty()) return f;
  return hint_undefined_symbol(env, l);
}

}  // namespace envdoctor::advice
