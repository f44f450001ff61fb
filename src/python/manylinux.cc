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
constexpr size_t kElfHeaderSize = 52;  // sizeof(Elf32_Ehdr), the smallest a loader reads
constexpr u16 kEmRiscv = 243;          // EM_RISCV, EM_LOONGARCH: absent from older <elf.h>
constexpr u16 kEmLoongarch = 258;
// ARM's e_flags (elf.h's EF_ARM_*): the EABI version in the top byte, and hard-float.
constexpr u32 kArmEabiMask = 0xff000000, kArmEabiVer5 = 0x05000000, kArmAbiFloatHard = 0x400;

std::string basename_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The dynamic linker: never a dependency to judge (auditwheel's policy/__init__.py, filter_libs).
bool is_dynamic_linker(std::string_view lib) {
  return lib.find("ld-linux") != std::string_view::npos || lib == "ld64.so.1" || lib == "ld64.so.2";
}

std::string machine_words(const elf::ElfFile& f) {
  std::string s = "e_machine " + std::to_string(f.machine) + ", " + elf::elf_class_name(f.elf_class) + ", " +
                  (f.big_endian() ? "big-endian" : "little-endian");
  return s;
}

// auditwheel's lddtree._get_platform: the architecture is the machine, class and byte order
// together; an ARM file must say EABI version 5 and hard-float to be armv7l.
void read_architecture(const elf::ElfFile& f, ElfAbi& a) {
  a.machine = machine_words(f);
  bool le = !f.big_endian(), b64 = f.is_64();
  switch (f.machine) {
    case EM_386: a.arch = !b64 && le ? "i686" : ""; break;
    case EM_X86_64: a.arch = b64 && le ? "x86_64" : ""; break;
    case EM_PPC64: a.arch = b64 ? (le ? "ppc64le" : "ppc64") : ""; break;
    case kEmRiscv: a.arch = b64 && le ? "riscv64" : ""; break;
    case EM_AARCH64: a.arch = b64 && le ? "aarch64" : ""; break;
    case EM_S390: a.arch = b64 && !le ? "s390x" : ""; break;
    case kEmLoongarch: a.arch = b64 && le ? "loongarch64" : ""; break;
    case EM_ARM:
      if (b64 || !le) break;
      if ((f.header_flags & kArmEabiMask) != kArmEabiVer5) a.machine += " (Invalid ARM EABI version for armv7l)";
      else if ((f.header_flags & kArmAbiFloatHard) != kArmAbiFloatHard) a.machine += " (armv7l shall use hard-float)";
      else a.arch = "armv7l";
      break;
  }
  if (a.arch != "x86_64" || !f.x86_isa_needed) return;
  u32 isa = *f.x86_isa_needed & ~u32{1};  // the baseline bit asks nothing
  if (isa & 8) a.isa = "x86_64_v4";
  else if (isa & 4) a.isa = "x86_64_v3";
  else if (isa & 2) a.isa = "x86_64_v2";
  else if (isa != 0) a.isa = "an unknown x86_64 ISA";
  a.isa_unsupported = !a.isa.empty();
}

// auditwheel's lddtree.ldd: the interpreter names the C library, then the NEEDED entries, then
// the extension module's file name.
std::optional<Libc> read_libc(const elf::ElfFile& f, const std::string& name) {
  if (f.interp) return starts_with(basename_of(std::string(*f.interp)), "ld-musl-") ? Libc::kMusl : Libc::kGlibc;
  for (std::string_view lib : f.needed) {
    if (starts_with(lib, "libc.musl-") || starts_with(lib, "ld-musl-")) return Libc::kMusl;
    if (lib == "libc.so.6" || starts_with(lib, "ld-linux-") || starts_with(lib, "ld64.so.")) return Libc::kGlibc;
  }
  std::string base = basename_of(name);
  if (base.ends_with("-arm-linux-musleabihf.so") || base.ends_with("-linux-musl.so")) return Libc::kMusl;
  if (base.ends_with("-arm-linux-gnueabihf.so") || base.ends_with("-linux-gnu.so")) {
    // Before CPython 3.11 musl builds said linux-gnu too: only cpython-311 and later tell.
    size_t at = base.find(".cpython-3");
    int minor = 0;
    if (at != std::string::npos) {
      const char* digits = base.data() + at + std::strlen(".cpython-3");
      std::from_chars(digits, base.data() + base.size(), minor);
    }
    if (minor >= 11) return Libc::kGlibc;
  }
  return std::nullopt;
}

// auditwheel's elfutils.elf_is_python_extension: the module's init function, defined.
int python_extension(const elf::ElfFile& f, const std::string& name) {
  std::string base = basename_of(name);
  std::string module = base.substr(0, base.find('.'));
  for (auto [prefix, version] : {std::pair{"PyInit_", 3}, {"init", 2}, {"_cffi_pypyinit_", 2}})
    for (u32 i : f.find_symbols(prefix + module))
      if (auto s = f.symbol(i); s && s->defined() && s->type == STT_FUNC) return version;
  return 0;
}

// The versions `needed` (per library) that `p` caps and does not allow: auditwheel's
// versioned_symbols_policy, which compares only the prefixes a policy lists.
std::map<std::string, std::set<std::string>> too_new_for(const Policy& p,
                                                         const std::map<std::string, std::set<std::string>>& needed) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [lib, versions] : needed)
    for (const std::string& v : versions) {
      auto allowed = p.symbol_versions.find(v.substr(0, v.find('_')));
      if (allowed != p.symbol_versions.end() && !allowed->second.count(v)) out[lib].insert(v);
    }
  return out;
}

struct Wheelset {
  std::vector<const ElfAbi*> files;               // the files judged
  std::vector<const ElfAbi*> top;                 // the ones whose libraries and blacklisted symbols count
  std::map<std::string, const ElfAbi*> provided;  // SONAME and file name -> the wheel's file
  SystemLibraries* system = nullptr;
};

// The libraries outside `p`'s whitelist that `top` needs from the system, through the wheel's own
// files and the system's (auditwheel's lddtree_external_references, get_req_external), each with
// what was found on this system (null: nothing).
std::map<std::string, const SystemLibrary*> external_libraries(const Wheelset& w, const Policy& p) {
  std::map<std::string, const SystemLibrary*> out;
  std::set<std::string> seen;
  std::vector<std::string> queue;
  for (const ElfAbi* f : w.top) queue.insert(queue.end(), f->needed.begin(), f->needed.end());
  while (!queue.empty()) {
    std::string lib = std::move(queue.back());
    queue.pop_back();
    if (is_dynamic_linker(lib) || p.whitelist.count(lib) || !seen.insert(lib).second) continue;
    auto own = w.provided.find(lib);
    if (own != w.provided.end()) {
      queue.insert(queue.end(), own->second->needed.begin(), own->second->needed.end());
      continue;
    }
    const SystemLibrary* found = w.system && !w.files.empty() ? w.system->find(lib, *w.files.front()) : nullptr;
    out[lib] = found;
    if (found) queue.insert(queue.end(), found->needed.begin(), found->needed.end());
  }
  return out;
}

using Versions = std::map<std::string, std::set<std::string>>;

// auditwheel's versioned_symbols_policy: the best policy that caps none of `needed` away.
size_t symbol_policy(const PolicySet& set, const Versions& needed) {
  for (size_t i = set.policies.size(); i-- > 1;)
    if (too_new_for(set.policies[i], needed).empty()) return i;
  return 0;
}

std::map<std::string, std::set<std::string>> blacklisted_symbols(const Wheelset& w, const Policy& p) {
  std::map<std::string, std::set<std::string>> out;
  for (const ElfAbi* f : w.top)
    for (const auto& [lib, symbols] : p.blacklist) {
      if (std::find(f->needed.begin(), f->needed.end(), lib) == f->needed.end()) continue;
      for (const std::string& s : symbols)
        if (f->undefined.count(s)) out[lib].insert(s);
    }
  return out;
}

size_t best_where(const AbiVerdict& v, bool (*met)(const PolicyBarrier&)) {
  size_t best = 0;
  for (size_t i = 0; i < v.barriers.size(); ++i)
    if (met(v.barriers[i])) best = i;
  return best;
}

// What keeps the files from `p`; `with_system` gets the versions they need together with those of
// the system libraries `p` would have them take along.
PolicyBarrier barrier_for(const Wheelset& w, const Policy& p, const Versions& own, Versions& with_system) {
  PolicyBarrier b;
  with_system = own;
  for (const auto& [lib, found] : external_libraries(w, p)) {
    b.libs_to_eliminate.insert(lib);
    if (found)
      for (const auto& [dep, versions] : found->versions) with_system[dep].insert(versions.begin(), versions.end());
  }
  b.too_new = too_new_for(p, with_system);
  b.blacklisted = blacklisted_symbols(w, p);
  return b;
}

AbiVerdict analyze(const Wheelset& w, PolicySet policies) {
  AbiVerdict v;
  v.policies = std::move(policies);
  Versions own;
  for (const ElfAbi* f : w.files)
    for (const auto& [lib, versions] : f->versions) own[lib].insert(versions.begin(), versions.end());
  for (const ElfAbi* f : w.top) {
    v.pyfpe |= f->python_extension && f->pyfpe;
    v.ucs2 |= f->python_extension == 2 && f->ucs2;
    v.unsupported_isa |= f->isa_unsupported;
  }
  // auditwheel's get_symbol_policies: each policy is held to the wheel's versions and those of the
  // system libraries it would take along; the symbol policy is the best any reaches (the first
  // to reach it, by ascending priority), and its versions are the ones reported.
  v.sym = symbol_policy(v.policies, own);
  v.versioned_symbols = own;
  bool chosen = false;
  for (size_t i = 0; i < v.policies.policies.size(); ++i) {
    const Policy& p = v.policies.policies[i];
    if (p.is_linux()) {
      v.barriers.emplace_back();
      continue;
    }
    Versions with_system;
    v.barriers.push_back(barrier_for(w, p, own, with_system));
    size_t reached = std::min(i, symbol_policy(v.policies, with_system));
    if (!chosen || reached > v.sym) {
      v.sym = reached;
      v.versioned_symbols = std::move(with_system);
      chosen = true;
    }
  }
  size_t ref = best_where(v, [](const PolicyBarrier& b) { return b.libs_to_eliminate.empty(); });
  size_t blacklist = best_where(v, [](const PolicyBarrier& b) { return b.blacklisted.empty(); });
  bool linux_only = v.pyfpe || v.ucs2 || v.unsupported_isa;
  v.overall = linux_only ? 0 : std::min({v.sym, ref, blacklist});
  for (const auto& [lib, found] : external_libraries(w, v.policies.highest()))
    v.external_libs[lib] = found ? found->path : "";
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

const char* const kArchitectures[] = {"x86_64", "i686",   "aarch64", "ppc64le",    "ppc64",
                                      "s390x",  "armv7l", "riscv64", "loongarch64"};

// The architecture a platform tag names ("manylinux2014_aarch64" -> "aarch64"), "" for none.
std::string tag_arch(std::string_view tag) {
  for (const char* arch : kArchitectures)
    if (tag.ends_with("_" + std::string(arch))) return arch;
  return "";
}

std::optional<Libc> tag_libc(std::string_view tag) {
  if (starts_with(tag, "manylinux")) return Libc::kGlibc;
  if (starts_with(tag, "musllinux")) return Libc::kMusl;
  return std::nullopt;
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
  const AbiVerdict& v = *a.verdict;
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
std::string no_platform_files(const std::string& arch, const std::vector<TagAudit::Ignored>& wrong_machine) {
  if (arch.empty() || wrong_machine.empty())
    return "This does not look like a platform wheel, no ELF executable or shared library file (including "
           "compiled Python C extension) found in the wheel archive";
  std::string files;
  for (const TagAudit::Ignored& i : wrong_machine) files += "\n\t" + basename_of(i.file);  // auditwheel: so_name
  return "Invalid binary wheel: no ELF executable or shared library file (including compiled Python C extension) "
         "with a '" +
         arch + "' architecture found. The following ELF files were found:" + files + "\n";
}

Wheelset wheelset_of(const std::vector<const ElfAbi*>& files, const std::vector<ElfAbi>& all, SystemLibraries* system) {
  Wheelset w;
  w.files = files;
  w.system = system;
  std::set<std::string> needed;
  for (const ElfAbi* f : files) needed.insert(f->needed.begin(), f->needed.end());
  for (const ElfAbi& f : all) {
    if (f.soname) w.provided.emplace(*f.soname, &f);
    w.provided.emplace(basename_of(f.file), &f);
  }
  // auditwheel's get_wheel_elfdata: extension modules, and the files no other file needs.
  for (const ElfAbi* f : files)
    if (f->python_extension || !needed.count(basename_of(f->file))) w.top.push_back(f);
  return w;
}

// The verdict on `a.members`, as auditwheel's analyze_wheel_abi reaches it.
void judge(TagAudit& a, const AuditwheelPolicies& policies, SystemLibraries* system) {
  std::string arch;
  std::optional<Libc> libc;
  for (const std::string& claim : a.claimed) {
    if (arch.empty()) arch = tag_arch(claim);
    if (!libc) libc = tag_libc(claim);
  }
  const std::string claimed_arch = arch;
  std::vector<TagAudit::Ignored> wrong_machine;
  std::vector<const ElfAbi*> judged;
  for (const ElfAbi& f : a.members) {
    if (f.arch.empty() || (!arch.empty() && f.arch != arch)) {
      wrong_machine.push_back(
          {f.file, f.arch.empty() ? "unknown architecture: " + f.machine : f.arch + " architecture"});
      continue;
    }
    arch = f.arch;
    if (f.libc && libc && *f.libc != *libc) {
      a.ignored.push_back({f.file, std::string(libc_name(*f.libc)) + " libc"});
      continue;
    }
    if (f.libc) libc = f.libc;
    judged.push_back(&f);
  }
  a.ignored.insert(a.ignored.begin(), wrong_machine.begin(), wrong_machine.end());
  for (const TagAudit::Ignored& i : a.ignored) a.notes.push_back("ignored: " + i.file + " with " + i.reason);
  if (judged.empty()) {
    bool any = !a.claimed.empty() &&
               std::all_of(a.claimed.begin(), a.claimed.end(), [](const std::string& t) { return t == "any"; });
    // auditwheel's show: a wheel tagged any is pure when it holds no ELF file of a known machine; a
    // wheel tagged for a platform without one gets its error (and claims less than it could).
    a.pure = any && a.ignored.size() == wrong_machine.size();
    if (!a.pure) a.error = no_platform_files(claimed_arch, wrong_machine);
    if (a.members.empty() && !any) a.notes.push_back("no ELF files: the wheel could be tagged any");
    return;
  }
  PolicySet set = policies.for_arch(libc.value_or(Libc::kGlibc), arch);
  if (!libc) a.notes.push_back("no file names its C library: judged as glibc");
  a.verdict = analyze(wheelset_of(judged, a.members, system), set);
  for (const ElfAbi* f : judged) {
    AbiVerdict own = judged.size() == 1 ? *a.verdict : analyze(wheelset_of({f}, a.members, system), set);
    a.member_tags.push_back({f->file, own.overall_policy().name});
  }
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
  return out;
}

ElfAbi read_elf_abi(const elf::ElfFile& f, std::string name) {
  ElfAbi a;
  a.file = std::move(name);
  a.e_machine = f.machine;
  a.elf_class = f.elf_class;
  a.data = f.data;
  read_architecture(f, a);
  a.libc = read_libc(f, a.file);
  a.python_extension = python_extension(f, a.file);
  if (f.soname) a.soname = std::string(*f.soname);
  for (std::string_view lib : f.needed) a.needed.emplace_back(lib);
  for (const elf::VersionNeed& need : f.verneed) {
    if (is_dynamic_linker(need.file)) continue;
    for (const elf::VersionNeedAux& aux : need.versions) a.versions[std::string(need.file)].emplace(aux.name);
  }
  for (u32 i = 1; i < f.symbol_count(); ++i) {
    std::optional<elf::Symbol> s = f.symbol(i);
    if (!s || s->defined()) continue;
    if (s->bind != STB_WEAK) a.undefined.emplace(s->name);
    if ((s->name == "PyFPE_jbuf" || s->name == "PyFPE_dummy" || s->name == "PyFPE_counter") &&
        (s->type == STT_FUNC || s->type == STT_NOTYPE))
      a.pyfpe = true;
    if (s->name.find("PyUnicodeUCS2_") != std::string_view::npos && s->type == STT_FUNC) a.ucs2 = true;
  }
  return a;
}

const SystemLibrary* SystemLibraries::find(const std::string& soname, const ElfAbi& for_file) {
  auto key = std::tuple{soname, for_file.e_machine, for_file.elf_class, for_file.data};
  if (auto it = found_.find(key); it != found_.end()) return it->second ? &*it->second : nullptr;
  std::optional<SystemLibrary>& out = found_[key];
  std::vector<std::string> candidates;
  std::string_view path_list = config_.ld_library_path;
  while (!path_list.empty()) {
    std::string_view dir = path_list.substr(0, path_list.find(':'));
    path_list.remove_prefix(std::min(path_list.size(), dir.size() + 1));
    if (!dir.empty()) candidates.push_back(std::string(dir) + "/" + soname);
  }
  std::optional<i64> flags = loader::cache_flags_for_machine(for_file.e_machine, for_file.elf_class == ELFCLASS64);
  if (config_.cache && flags)
    if (auto cached = config_.cache->lookup(soname, *flags, config_.hwcaps, config_.cache_hwcaps))
      candidates.emplace_back(*cached);
  for (const std::string& dir : config_.default_dirs) candidates.push_back(dir + "/" + soname);
  for (const std::string& candidate : candidates) {
    std::string error;
    std::shared_ptr<const MappedFile> file = MappedFile::open(config_.root + candidate, &error);
    std::unique_ptr<elf::ElfFile> elf = file ? elf::ElfFile::parse(file, &error) : nullptr;
    if (!elf || elf->machine != for_file.e_machine || elf->elf_class != for_file.elf_class ||
        elf->data != for_file.data)
      continue;
    ElfAbi abi = read_elf_abi(*elf, candidate);
    // auditwheel's lddtree.readlink: the file's own symbolic links, not its directories'.
    std::filesystem::path real = candidate;
    std::error_code ec;
    for (int hops = 0; hops < 40 && std::filesystem::is_symlink(config_.root + real.string(), ec); ++hops) {
      std::filesystem::path target = std::filesystem::read_symlink(config_.root + real.string(), ec);
      if (ec) break;
      real = (target.is_absolute() ? target : real.parent_path() / target).lexically_normal();
    }
    out = SystemLibrary{real.string(), abi.needed, abi.versions};
    break;
  }
  return out ? &*out : nullptr;
}

TagAudit audit_elf_file(const elf::ElfFile& file, const std::string& path, const AuditwheelPolicies& policies,
                        SystemLibraries* system) {
  TagAudit a;
  a.path = path;
  a.name = basename_of(path);
  a.members.push_back(read_elf_abi(file, path));
  judge(a, policies, system);
  return a;
}

std::optional<TagAudit> audit_wheel(python::Wheel& wheel, const AuditwheelPolicies& policies, SystemLibraries* system,
                                    std::string* error) {
  TagAudit a;
  a.path = wheel.path().string();
  a.name = wheel.path().filename().string();
  a.is_wheel = true;
  a.claimed = wheel.filename().platform_tags;
  for (const python::WheelMember& m : wheel.members()) {
    if (m.is_directory || m.size < kElfHeaderSize || m.name.ends_with(".py")) continue;
    auto bytes = wheel.read(m.name, kMaxMemberRead, error);
    if (!bytes) {
      *error = a.path + ": " + *error;
      return std::nullopt;
    }
    if (std::memcmp(bytes->data(), ELFMAG, SELFMAG) != 0) continue;
    std::string parse_error;
    std::unique_ptr<elf::ElfFile> elf =
        elf::ElfFile::parse(MappedFile::from_buffer(m.name, std::move(*bytes)), &parse_error);
    if (!elf) {
      a.notes.push_back("ignored: " + m.name + ", which is not an ELF file a loader reads (" + parse_error + ")");
      continue;
    }
    a.members.push_back(read_elf_abi(*elf, m.name));
  }
  judge(a, policies, system);
  judge_claims(a);
  return a;
}

}  // namespace envdoctor::python
