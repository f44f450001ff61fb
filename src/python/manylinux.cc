#include "python/manylinux.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "python/wheel.h"
#include "support/text.h"

namespace envdoctor::python {

namespace {

constexpr u64 kMaxMemberRead = u64{2} << 30;
constexpr size_t kElfIdentSize = 16;

using Versions = std::map<std::string, std::set<std::string>>;

std::string file_name_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The versions `needed` (per library) that `p` caps and does not allow: auditwheel's
// versioned_symbols_policy, which compares only the prefixes a policy lists.
Versions too_new_for(const Policy& p, const Versions& needed) {
  Versions out;
  for (const auto& [lib, versions] : needed)
    for (const std::string& v : versions) {
      auto allowed = p.symbol_versions.find(v.substr(0, v.find('_')));
      if (allowed != p.symbol_versions.end() && !allowed->second.count(v)) out[lib].insert(v);
    }
  return out;
}

// auditwheel's versioned_symbols_policy: the best policy that caps none of `needed` away.
size_t symbol_policy(const PolicySet& set, const Versions& needed) {
  for (size_t i = set.policies.size(); i-- > 1;)
    if (too_new_for(set.policies[i], needed).empty()) return i;
  return 0;
}

void add_versions(Versions& into, const Versions& from) {
  for (const auto& [lib, versions] : from) into[lib].insert(versions.begin(), versions.end());
}

// policy/__init__.py's ExternalReference, one per policy of a set.
struct ExternalReference {
  std::map<std::string, std::optional<std::string>> libs;  // soname -> where it was found (none: not found)
  Versions blacklist;                                      // library -> the blacklisted symbols used
};
using ExternalRefs = std::vector<ExternalReference>;

// WheelPolicies.lddtree_external_references: for each policy, the libraries `tree` needs outside
// its whitelist (through those outside it) that are not the wheel's own, and the blacklisted
// symbols of the libraries the file itself names.
ExternalRefs external_references(const PolicySet& set, const DynamicExecutable& tree, const LddFiles& files) {
  bool android = set.libc == Libc::kAndroid;
  ExternalRefs out(set.policies.size());
  for (size_t i = 0; i < set.policies.size(); ++i) {
    const Policy& p = set.policies[i];
    if (p.is_linux()) continue;  // no whitelist: nothing is external
    auto external = [&](const std::string& lib) {
      return !is_dynamic_linker(lib) && !(android && is_libpython(lib)) && !p.whitelist.count(lib);
    };
    for (const auto& [lib, symbols] : p.blacklist) {
      if (std::find(tree.needed.begin(), tree.needed.end(), lib) == tree.needed.end()) continue;
      for (const std::string& s : symbols)
        if (s == "*" || tree.elf->undefined.count(s)) out[i].blacklist[lib].insert(s);
    }
    std::set<std::string> required;
    std::vector<std::string> queue;
    for (const std::string& lib : tree.needed)
      if (external(lib)) queue.push_back(lib);
    while (!queue.empty()) {
      std::string lib = std::move(queue.back());
      queue.pop_back();
      if (!required.insert(lib).second) continue;
      auto found = tree.libraries.find(lib);
      if (found == tree.libraries.end()) continue;
      for (const std::string& dep : found->second.needed)
        if (external(dep) && !required.count(dep)) queue.push_back(dep);
    }
    for (const std::string& lib : required) {
      auto found = tree.libraries.find(lib);
      std::optional<std::string> realpath = found == tree.libraries.end() ? std::nullopt : found->second.realpath;
      if (realpath && files.in_wheel(*realpath)) continue;  // found through the wheel's own paths
      out[i].libs[lib] = realpath;
    }
  }
  return out;
}

// What get_wheel_elfdata gathers, before a policy set is applied.
struct Trees {
  std::vector<std::pair<std::string, DynamicExecutable>> py, nonpy;  // by path, in RECORD's order
  std::vector<const DynamicExecutable*> top;  // full_elftree: extension modules, then files nothing needs
  Versions versioned_symbols;
  bool pyfpe = false, ucs2 = false;
};

// wheel_abi._fixup_elf_trees: a file that is no extension module and misses a library takes the
// libraries that the first fully resolved tree loading it found for those names (and theirs).
void fixup_elf_trees(Trees& t, const LddFiles& files) {
  std::vector<const DynamicExecutable*> resolved;
  for (const auto* trees : {&t.py, &t.nonpy})
    for (const auto& [path, tree] : *trees)
      if (std::all_of(tree.libraries.begin(), tree.libraries.end(), [](const auto& l) { return l.second.realpath; }))
        resolved.push_back(&tree);
  for (auto& [path, tree] : t.nonpy) {
    if (std::all_of(tree.libraries.begin(), tree.libraries.end(), [](const auto& l) { return l.second.realpath; }))
      continue;
    std::string self = files.absolute(path);
    const DynamicExecutable* reference = nullptr;
    for (const DynamicExecutable* candidate : resolved)
      for (const auto& [soname, lib] : candidate->libraries)
        if (!reference && files.absolute(*lib.realpath) == self) reference = candidate;
    if (!reference) continue;
    std::map<std::string, DynamicLibrary> libraries;
    std::set<std::string> known;
    for (const auto& [soname, lib] : tree.libraries) known.insert(soname);
    for (const auto& [soname, lib] : tree.libraries) {
      auto from = reference->libraries.find(soname);
      if (lib.realpath || from == reference->libraries.end()) {
        libraries.emplace(soname, lib);
        continue;
      }
      libraries.insert_or_assign(soname, from->second);
      std::vector<std::string> more(from->second.needed.begin(), from->second.needed.end());
      while (!more.empty()) {
        std::string next = std::move(more.back());
        more.pop_back();
        if (!known.insert(next).second) continue;
        auto dep = reference->libraries.find(next);
        if (dep == reference->libraries.end()) continue;
        libraries.insert_or_assign(next, dep->second);
        more.insert(more.end(), dep->second.needed.begin(), dep->second.needed.end());
      }
    }
    tree.libraries = std::move(libraries);
  }
}

// policy_upgrades' `update`: each file's references merged (a later file's path wins, blacklists add up).
ExternalRefs merged_references(const PolicySet& set, const std::vector<const DynamicExecutable*>& top,
                               const LddFiles& files) {
  ExternalRefs out(set.policies.size());
  for (const DynamicExecutable* tree : top) {
    ExternalRefs own = external_references(set, *tree, files);
    for (size_t i = 0; i < own.size(); ++i) {
      for (auto& [lib, path] : own[i].libs) out[i].libs.insert_or_assign(lib, path);
      add_versions(out[i].blacklist, own[i].blacklist);
    }
  }
  return out;
}

// wheel_abi._get_machine_policy: a file that needs an ISA extension earns linux; an external
// library that needs one, the best policy whose whitelist holds it.
size_t machine_policy(const PolicySet& set, const std::vector<const DynamicExecutable*>& top,
                      const std::set<std::string>& external_sonames) {
  size_t result = set.policies.size() - 1;
  std::set<std::string> seen;
  std::vector<std::pair<std::optional<std::string>, const ElfAbi*>> to_check;
  for (const DynamicExecutable* tree : top) {
    if (!seen.insert(tree->path).second) continue;
    to_check.emplace_back(std::nullopt, tree->elf);
    for (const auto& [soname, lib] : tree->libraries)
      if (external_sonames.count(soname) && lib.realpath && lib.elf && seen.insert(*lib.realpath).second)
        to_check.emplace_back(soname, lib.elf);
  }
  for (const auto& [soname, elf] : to_check) {
    if (elf->isa.empty()) continue;
    size_t whitelisted = 0;
    for (size_t i = 0; soname && i < set.policies.size(); ++i)
      if (set.policies[i].whitelist.count(*soname)) whitelisted = i;
    if (whitelisted > 0 && elf->isa != "an unknown x86_64 ISA") {
      result = std::min(result, whitelisted);
      continue;
    }
    result = 0;
  }
  return result;
}

size_t best_where(const AbiVerdict& v, bool (*met)(const PolicyBarrier&)) {
  size_t best = 0;
  for (size_t i = 0; i < v.barriers.size(); ++i)
    if (met(v.barriers[i])) best = i;
  return best;
}

// wheel_abi.analyze_wheel_abi over the trees `top`, with the versions `versions` of every file.
AbiVerdict analyze(const std::vector<const DynamicExecutable*>& top, const Versions& versions, bool pyfpe, bool ucs2,
                   PolicySet set, LddFiles& files) {
  AbiVerdict v;
  v.policies = std::move(set);
  const PolicySet& ps = v.policies;
  ExternalRefs refs = merged_references(ps, top, files);
  // get_external_libs and get_versioned_symbols: what the libraries found here need in turn.
  std::map<std::string, std::string> external;  // realpath -> soname (the first)
  for (size_t i = 1; i < refs.size(); ++i)
    for (const auto& [lib, path] : refs[i].libs)
      if (path) external.emplace(*path, lib);
  std::map<std::string, Versions> external_versions;
  std::set<std::string> external_sonames;
  for (const auto& [path, soname] : external) {
    external_sonames.insert(soname);
    if (path.ends_with(".py")) continue;
    if (const ElfAbi* elf = files.elf(path)) external_versions[soname] = elf->versions;
  }
  v.barriers.resize(ps.policies.size());
  // get_symbol_policies: each policy with its own external libraries' versions; the best any
  // reaches (the first to reach it), and the versions it was reached with.
  v.sym = symbol_policy(ps, versions);
  v.versioned_symbols = versions;
  bool chosen = false;
  for (size_t i = 1; i < ps.policies.size(); ++i) {
    Versions with_external = versions;
    for (const auto& [lib, path] : refs[i].libs)
      if (auto found = external_versions.find(lib); found != external_versions.end())
        add_versions(with_external, found->second);
    size_t reached = std::min(i, symbol_policy(ps, with_external));
    PolicyBarrier& b = v.barriers[i];
    b.too_new = too_new_for(ps.policies[i], with_external);
    for (const auto& [lib, path] : refs[i].libs) b.libs_to_eliminate.insert(lib);
    b.blacklisted = refs[i].blacklist;
    if (!chosen || reached > v.sym) {
      v.sym = reached;
      v.versioned_symbols = std::move(with_external);
      chosen = true;
    }
  }
  size_t ref = best_where(v, [](const PolicyBarrier& b) { return b.libs_to_eliminate.empty(); });
  size_t blacklist = best_where(v, [](const PolicyBarrier& b) { return b.blacklisted.empty(); });
  v.machine = machine_policy(ps, top, external_sonames);
  // auditwheel reports each as its policy being linux: all three, where linux is the only policy.
  v.pyfpe = pyfpe || ps.policies.size() == 1;
  v.ucs2 = ucs2 || ps.policies.size() == 1;
  v.unsupported_isa = v.machine == 0;
  v.overall = pyfpe || ucs2 ? 0 : std::min({v.sym, ref, blacklist, v.machine});
  for (const auto& [lib, path] : refs.back().libs) v.external_libs[lib] = path.value_or("");
  return v;
}

// "manylinux_2_17_x86_64" -> (2, 17); nullopt for linux_* and names without a version.
std::optional<std::pair<int, int>> policy_version(std::string_view tag) {
  size_t a = tag.find('_');
  if (a == std::string_view::npos) return std::nullopt;
  size_t b = tag.find('_', a + 1), c = b == std::string_view::npos ? b : tag.find('_', b + 1);
  if (c == std::string_view::npos) return std::nullopt;
  int major = 0, minor = 0;
  auto r1 = std::from_chars(tag.data() + a + 1, tag.data() + b, major);
  auto r2 = std::from_chars(tag.data() + b + 1, tag.data() + c, minor);
  if (r1.ec != std::errc() || r1.ptr != tag.data() + b || r2.ec != std::errc() || r2.ptr != tag.data() + c)
    return std::nullopt;
  return std::pair{major, minor};
}

// auditwheel's Architecture values, each with its baseline.
const std::pair<const char*, const char*> kArchitectures[] = {
    {"aarch64", "aarch64"}, {"arm64_v8a", "aarch64"},       {"armv7l", "armv7l"},
    {"i686", "i686"},       {"loongarch64", "loongarch64"}, {"ppc64", "ppc64"},
    {"ppc64le", "ppc64le"}, {"riscv64", "riscv64"},         {"s390x", "s390x"},
    {"x86_64", "x86_64"},   {"x86_64_v2", "x86_64"},        {"x86_64_v3", "x86_64"},
    {"x86_64_v4", "x86_64"}};

// The architecture a platform tag names ("manylinux2014_aarch64" -> "aarch64"), "" for none.
std::string tag_arch(std::string_view tag) {
  for (const auto& [arch, baseline] : kArchitectures)
    if (tag.ends_with("_" + std::string(arch))) return baseline;
  return "";
}

std::optional<Libc> tag_libc(std::string_view tag) {
  for (Libc libc : {Libc::kGlibc, Libc::kMusl, Libc::kAndroid})
    if (tag.starts_with(libc_tag_prefix(libc))) return libc;
  return std::nullopt;
}

// wheeltools.get_wheel_architecture: the one architecture the platform tags name; none when they
// name several, or one and a tag of none (any, macosx_...).
std::optional<std::string> wheel_arch(const std::vector<std::string>& platforms) {
  std::set<std::string> found;
  bool missed = false;
  for (const std::string& p : platforms) {
    std::string arch = p == "any" ? "" : tag_arch(p);
    missed |= arch.empty();
    if (!arch.empty()) found.insert(arch);
  }
  if (found.size() != 1 || missed) return std::nullopt;
  return *found.begin();
}

// wheeltools.get_wheel_libc: the one C library the platform tags name.
std::optional<Libc> wheel_libc(const std::vector<std::string>& platforms) {
  std::set<Libc> found;
  for (const std::string& p : platforms)
    if (std::optional<Libc> libc = tag_libc(p)) found.insert(*libc);
  if (found.size() != 1) return std::nullopt;
  return *found.begin();
}

std::string sorted_list(const std::set<std::string>& items) {
  return support::join(std::vector<std::string>(items.begin(), items.end()));
}

std::string per_library(const std::map<std::string, std::set<std::string>>& by_lib) {
  std::vector<std::string> parts;
  for (const auto& [lib, items] : by_lib) parts.push_back(sorted_list(items) + " (" + lib + ")");
  return support::join(parts, "; ");
}

// The policy a claim is held to: the one it names, or for a version auditwheel does not define
// (manylinux_2_30), the newest defined one it covers (manylinux_2_28).
const Policy* claimed_policy(const PolicySet& set, const std::string& claim) {
  if (const Policy* p = set.find(claim)) return p;
  std::optional<std::pair<int, int>> want = policy_version(claim);
  const Policy* best = nullptr;
  for (const Policy& p : set.policies) {
    std::optional<std::pair<int, int>> have = policy_version(p.name);
    if (have && want && *have <= *want && (!best || *policy_version(best->name) < *have)) best = &p;
  }
  return best;
}

// One claimed tag against the verdict; "" when it holds.
std::string judge_claim(const TagAudit& a, const std::string& claim) {
  const AbiVerdict& v = a.claims_verdict ? *a.claims_verdict : *a.verdict;
  std::string arch = tag_arch(claim);
  if (claim == "any") return "tagged any, but it holds ELF files for " + v.policies.arch;
  if (arch.empty()) return "";  // another platform's tag (macosx_..., win_...): not judged here
  if (arch != v.policies.arch) return "tagged " + claim + ", but its ELF files are for " + v.policies.arch;
  std::optional<Libc> libc = tag_libc(claim);
  if (!libc) return "";  // linux_<arch> promises nothing more
  if (*libc != v.policies.libc)
    return "tagged " + claim + ", but its files need " + std::string(libc_name(v.policies.libc)) + ", not " +
           std::string(libc_name(*libc));
  const Policy* p = claimed_policy(v.policies, claim);
  const Policy& earned = v.overall_policy();
  if (v.policies.policies.size() == 1)
    return "tagged " + claim + ", but auditwheel defines no " + std::string(libc_tag_prefix(*libc)) + " policy for " +
           arch;
  if (!p || p->is_linux())
    return "tagged " + claim + ", but auditwheel defines no policy that old for " + arch + " (its oldest is " +
           v.policies.highest().name + ")";
  if (p->priority <= earned.priority) return "";
  std::string named =
      p->named(claim) ? "" : " (held to " + p->name + ", the newest policy auditwheel defines at or below it)";
  return "tagged " + claim + named + ", but its files earn " + earned.name + ": " +
         support::join(v.reasons_missed(*p), "; ");
}

void judge_claims(TagAudit& a) {
  for (const std::string& claim : a.claimed) {
    if (a.verdict) {
      if (std::string problem = judge_claim(a, claim); !problem.empty()) a.problems.push_back(problem);
      continue;
    }
    // Nothing judged: a claim of an architecture is wrong when the wheel holds ELF files but
    // none for that architecture (or C library).
    std::string arch = tag_arch(claim);
    if (arch.empty() || a.ignored.empty()) continue;
    std::vector<std::string> found;
    for (const TagAudit::Ignored& i : a.ignored) found.push_back(i.file + " (" + i.reason + ")");
    a.problems.push_back("tagged " + claim + ", but it holds no ELF file it can run there: " + support::join(found));
  }
}

// auditwheel's NonPlatformWheelError.
std::string no_platform_files(const std::optional<std::string>& arch, const std::vector<std::string>& wrong_machine) {
  if (!arch || wrong_machine.empty())
    return "This does not look like a platform wheel, no ELF executable or shared library file (including "
           "compiled Python C extension) found in the wheel archive";
  std::string files;
  for (const std::string& name : wrong_machine) files += "\n\t" + name;
  return "Invalid binary wheel: no ELF executable or shared library file (including compiled Python C extension) "
         "with a '" +
         *arch + "' architecture found. The following ELF files were found:" + files + "\n";
}

// What the wheel's name says, as auditwheel's show reads it.
struct WheelTags {
  std::vector<std::string> platforms;
  std::optional<std::string> arch;
  std::optional<Libc> libc;
  bool pure = false;  // every platform tag is "any"
};

WheelTags wheel_tags(std::vector<std::string> platforms) {
  std::sort(platforms.begin(), platforms.end());  // get_wheel_platforms: a sorted set
  platforms.erase(std::unique(platforms.begin(), platforms.end()), platforms.end());
  WheelTags t;
  t.platforms = platforms;
  t.arch = wheel_arch(platforms);
  t.libc = wheel_libc(platforms);
  t.pure = !platforms.empty() &&
           std::all_of(platforms.begin(), platforms.end(), [](const std::string& p) { return p == "any"; });
  return t;
}

// envdoctor's own: each file of the wheel on its own, with the trees auditwheel gave it.
void tag_each_member(TagAudit& a, const Trees& t, const PolicySet& set, LddFiles& files) {
  if (a.members.size() == 1) {
    a.member_tags.push_back({a.members[0].file, a.verdict->overall_policy().name});
    return;
  }
  for (const auto* trees : {&t.py, &t.nonpy})
    for (const auto& [path, tree] : *trees) {
      bool ext = trees == &t.py;
      AbiVerdict own = analyze({&tree}, tree.elf->versions, ext && tree.elf->pyfpe,
                               ext && tree.elf->python_extension == 2 && tree.elf->ucs2, set, files);
      a.member_tags.push_back({path, own.overall_policy().name});
    }
}

// wheel_abi.get_wheel_elfdata and analyze_wheel_abi over `files` (the ELF files RECORD lists, in
// its order), and main_show's answer when there is nothing to judge.
void judge(TagAudit& a, const std::vector<std::string>& paths, const WheelTags& tags,
           const AuditwheelPolicies& policies, LddFiles& files) {
  Trees t;
  std::optional<std::string> arch = tags.arch;
  std::optional<Libc> libc = tags.libc;
  bool cross_compiled = libc == Libc::kAndroid;
  std::vector<std::string> wrong_machine, in_purelib;
  for (const std::string& path : paths) {
    const ElfAbi& elf = *files.elf(path);
    std::filesystem::path parents = std::filesystem::path(path).parent_path();
    if (std::any_of(parents.begin(), parents.end(), [](const auto& part) { return part == "purelib"; }))
      in_purelib.push_back(file_name_of(path));
    if (!in_purelib.empty()) continue;
    DynamicExecutable tree = lddtree(files, path, cross_compiled);
    if (elf.arch.empty() || (arch && elf.arch != *arch)) {
      wrong_machine.push_back(file_name_of(path));
      a.ignored.push_back(
          {path, elf.arch.empty() ? "unknown architecture: " + elf.machine : elf.arch + " architecture"});
      continue;
    }
    arch = elf.arch;
    if (elf.libc && libc && *elf.libc != *libc) {
      a.ignored.push_back({path, std::string(libc_name(*elf.libc)) + " libc"});
      continue;
    }
    if (elf.libc) libc = elf.libc;
    a.members.push_back({path, elf.arch, elf.machine, elf.python_extension});
    add_versions(t.versioned_symbols, elf.versions);
    if (elf.python_extension && !libc) {
      a.error = "couldn't detect libc for python extension " + path;
      return;
    }
    if (elf.python_extension) {
      t.pyfpe |= elf.pyfpe;
      t.ucs2 |= elf.python_extension == 2 && elf.ucs2;
    }
    (elf.python_extension ? t.py : t.nonpy).emplace_back(path, std::move(tree));
  }
  for (const TagAudit::Ignored& i : a.ignored) a.notes.push_back("ignored: " + i.file + " with " + i.reason);
  if (!in_purelib.empty()) {
    a.error = "Invalid binary wheel, found the following shared library/libraries in purelib folder:\n\t" +
              support::join(in_purelib, "\n\t") +
              "\nThe wheel has to be platlib compliant in order to be repaired by auditwheel.";
    return;
  }
  if (a.members.empty()) {
    a.pure = tags.pure;
    if (!a.pure) a.error = no_platform_files(arch, wrong_machine);
    if (paths.empty() && !tags.pure && a.is_wheel) a.notes.push_back("no ELF files: the wheel could be tagged any");
    return;
  }
  fixup_elf_trees(t, files);
  std::set<std::string> needed;
  for (const auto* trees : {&t.py, &t.nonpy})
    for (const auto& [path, tree] : *trees) needed.insert(tree.needed.begin(), tree.needed.end());
  for (const auto& [path, tree] : t.py) t.top.push_back(&tree);
  for (const auto& [path, tree] : t.nonpy)
    if (!needed.count(file_name_of(path))) t.top.push_back(&tree);
  if (!libc) {
    libc = files.host().libc();
    a.notes.push_back("no file names its C library: judged as this machine's, " + std::string(libc_name(*libc)));
  }
  std::string error;
  std::optional<PolicySet> set =
      policies.wheel_policies(*libc, *arch, tags.platforms, files.host().musl_policy(), &error);
  if (!set) {
    a.error = error;
    return;
  }
  a.verdict = analyze(t.top, t.versioned_symbols, t.pyfpe, t.ucs2, *set, files);
  if (*libc == Libc::kMusl && set->policies.size() < policies.for_arch(*libc, *arch).policies.size())
    a.claims_verdict = analyze(t.top, t.versioned_symbols, t.pyfpe, t.ucs2, policies.for_arch(*libc, *arch), files);
  tag_each_member(a, t, *set, files);
}

}  // namespace

std::vector<std::string> AbiVerdict::reasons_missed(const Policy& policy) const {
  std::vector<std::string> out;
  size_t i = static_cast<size_t>(&policy - policies.policies.data());
  if (i >= barriers.size()) return out;
  const PolicyBarrier& b = barriers[i];
  if (!b.too_new.empty()) out.push_back("the symbol versions " + per_library(b.too_new) + " are too new for it");
  if (!b.libs_to_eliminate.empty())
    out.push_back("the shared library dependencies " + sorted_list(b.libs_to_eliminate) +
                  " will need to be eliminated");
  if (!b.blacklisted.empty())
    out.push_back("the black-listed symbol dependencies " + per_library(b.blacklisted) + " will need to be eliminated");
  if (pyfpe && !policy.is_linux())
    out.push_back("it uses the PyFPE_jbuf function, which is not compatible with the manylinux/musllinux tags");
  if (ucs2 && !policy.is_linux())
    out.push_back(
        "it is compiled against a narrow unicode (UCS2) version of Python, which is not compatible with "
        "the manylinux/musllinux tags");
  if (unsupported_isa && !policy.is_linux()) out.push_back("it depends on unsupported ISA extensions");
  else if (i > machine) out.push_back("a library it needs from outside depends on unsupported ISA extensions");
  return out;
}

TagAudit audit_elf_file(const std::string& path, const AuditwheelPolicies& policies, LddHost& host) {
  TagAudit a;
  a.path = path;
  a.name = file_name_of(path);
  LddFiles files(host, std::nullopt);
  if (files.elf(path)) judge(a, {path}, WheelTags{}, policies, files);
  return a;
}

std::optional<TagAudit> audit_wheel(python::Wheel& wheel, const AuditwheelPolicies& policies, LddHost& host,
                                    std::string* error) {
  TagAudit a;
  a.path = wheel.path().string();
  a.name = wheel.path().filename().string();
  a.is_wheel = true;
  a.claimed = wheel.filename().platform_tags;
  // auditwheel extracts every member into a temporary directory, and judges the files RECORD lists.
  LddFiles files(host, host.facts().tmpdir + "/envdoctor-wheel");
  std::set<std::string> elf_members;
  for (const python::WheelMember& m : wheel.members()) {
    if (m.is_directory || m.size < kElfIdentSize) continue;
    auto bytes = wheel.read(m.name, kMaxMemberRead, error);
    if (!bytes) {
      *error = a.path + ": " + *error;
      return std::nullopt;
    }
    if (std::memcmp(bytes->data(), ELFMAG, SELFMAG) != 0) continue;
    std::shared_ptr<const MappedFile> mapped = MappedFile::from_buffer(m.name, std::move(*bytes));
    std::string parse_error;
    std::unique_ptr<ElfAbi> abi;
    if (std::unique_ptr<elf::ElfFile> elf = elf::ElfFile::parse(mapped, &parse_error))
      abi = std::make_unique<ElfAbi>(read_elf_abi(*elf, m.name));
    else if (std::optional<ElfAbi> header = read_elf_header_abi(mapped->bytes(), m.name))
      abi = std::make_unique<ElfAbi>(std::move(*header));
    if (!abi) continue;
    files.add_member(m.name, std::move(abi));
    elf_members.insert(m.name);
  }
  std::vector<std::string> listed;
  std::set<std::string> seen;
  for (const RecordEntry& e : wheel.metadata().record) {
    std::string name = lddtree_normpath(e.path);
    if (name.ends_with(".py") || !elf_members.count(name) || !seen.insert(name).second) continue;
    listed.push_back(name);
  }
  for (const std::string& m : elf_members)
    if (!seen.count(m))
      a.notes.push_back("ignored: " + m + ", which RECORD does not list (auditwheel judges what it lists)");
  judge(a, listed, wheel_tags(a.claimed), policies, files);
  judge_claims(a);
  return a;
}

}  // namespace envdoctor::python
