// The platform tag ELF files earn, by auditwheel's rules and auditwheel's own policy data
// (python/auditwheel_policy.h), and whether a wheel's own tags claim more than that.
//
// What auditwheel reads of a file (`ElfAbi`): its architecture, from the header's machine, class
// and byte order (and, for armv7l, the EABI version 5 hard-float flags; for x86_64, the ISA level
// a GNU property note says it needs); its C library (the program interpreter, then NEEDED
// entries, then the file name); its NEEDED entries; the symbol versions it needs of each library
// (DT_VERNEED, the dynamic linker's own excepted); its undefined symbols; and whether it is a
// Python extension module (it defines PyInit_<name>, or init<name> for Python 2).
//
// The verdict (`AbiVerdict`, auditwheel's wheel_abi.analyze_wheel_abi) is the lowest of:
//   - the symbol policy: the best policy that allows every version needed, prefix by prefix
//     (GLIBC_, GLIBCXX_, CXXABI_, GCC_, ZLIB_, ...; a prefix a policy does not list is not
//     capped by it), so a need between two defined policies rounds up to the next one;
//   - the library policy: the best policy whose whitelist holds every library the files need from
//     the system (a library another file of the wheel provides is the wheel's own, and what it
//     needs in turn is asked of the system);
//   - the blacklist policy: the best policy none of whose blacklisted symbols the files use from
//     the blacklisted library (zlib's zcalloc, ...);
//   - linux when an extension module references PyFPE_jbuf (tied to one interpreter build) or
//     narrow-unicode symbols (PyUnicodeUCS2_*), or a file needs an ISA extension (x86-64-v2 and up).
// As in auditwheel, the library and blacklist rules look at the wheel's extension modules and at
// the files no other file of the wheel needs; the symbol versions of every file count. A library
// needed from outside the wheel is looked for on this system (`SystemLibraries`, as auditwheel's
// lddtree does): what it needs in turn is outside the wheel too, and for each policy its own
// symbol versions count with the wheel's (auditwheel's get_symbol_policies).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "loader/search_paths.h"
#include "python/auditwheel_policy.h"

namespace envdoctor::python {
class Wheel;
}

namespace envdoctor::python {

struct ElfAbi {
  std::string file;  // the path, or the wheel member's name
  u16 e_machine = 0;
  u8 elf_class = 0, data = 0;
  std::string arch;     // "x86_64", "armv7l", ...; "" when auditwheel knows no such architecture
  std::string machine;  // "EM_ARM, ELFCLASS32, little-endian (soft-float)": what the header says
  std::string isa;      // "x86_64_v3" when a property note asks more than the baseline; "" otherwise
  bool isa_unsupported = false;
  std::optional<Libc> libc;
  int python_extension = 0;  // 3: defines PyInit_<name>; 2: init<name> or _cffi_pypyinit_<name>
  std::optional<std::string> soname;
  std::vector<std::string> needed;
  std::map<std::string, std::set<std::string>> versions;  // library -> version names it needs
  std::set<std::string> undefined;                        // non-weak undefined dynamic symbols
  bool pyfpe = false;                                     // references PyFPE_jbuf, PyFPE_dummy or PyFPE_counter
  bool ucs2 = false;                                      // a Python 2 module referencing PyUnicodeUCS2_*
};

ElfAbi read_elf_abi(const elf::ElfFile& file, std::string name);

// A library found on this system for a file that needs it: its path (symbolic links of the file
// itself followed, as auditwheel's readlink does), what it needs, and its own version needs.
struct SystemLibrary {
  std::string path;
  std::vector<std::string> needed;
  std::map<std::string, std::set<std::string>> versions;
};

// Finds SONAMEs on this system as auditwheel's lddtree does: LD_LIBRARY_PATH, then the
// directories of ld.so.conf (through ld.so.cache), then the default directories; a candidate of
// another machine, class or byte order is passed over. Each answer is kept.
class SystemLibraries {
 public:
  explicit SystemLibraries(loader::LoaderConfig config) : config_(std::move(config)) {}
  // nullptr when no file of that machine, class and byte order has the name.
  const SystemLibrary* find(const std::string& soname, const ElfAbi& for_file);

 private:
  loader::LoaderConfig config_;
  std::map<std::tuple<std::string, u16, u8, u8>, std::optional<SystemLibrary>> found_;
};

// What keeps a set of files from one policy. Empty for every policy the files meet.
struct PolicyBarrier {
  std::map<std::string, std::set<std::string>> too_new;      // library -> versions the policy lacks
  std::set<std::string> libs_to_eliminate;                   // libraries outside its whitelist
  std::map<std::string, std::set<std::string>> blacklisted;  // library -> symbols it forbids
};

struct AbiVerdict {
  PolicySet policies;
  std::vector<PolicyBarrier> barriers;  // one per policy, in `policies` order
  size_t overall = 0, sym = 0;          // indices into policies.policies
  bool pyfpe = false, ucs2 = false, unsupported_isa = false;
  // Over every file, with the version needs of the system libraries the symbol policy allows.
  std::map<std::string, std::set<std::string>> versioned_symbols;
  std::map<std::string, std::string> external_libs;  // for the highest policy: library -> path, "" if not found

  const Policy& overall_policy() const { return policies.policies[overall]; }
  const Policy& sym_policy() const { return policies.policies[sym]; }
  // Why the files miss `policy` (one of `policies`), in auditwheel's terms; empty when they meet it.
  std::vector<std::string> reasons_missed(const Policy& policy) const;
};

// One file or one wheel, and its claims held against what its files earn.
struct TagAudit {
  std::string path;  // as given
  std::string name;  // the file name (auditwheel's "wheel")
  bool is_wheel = false;
  std::vector<std::string> claimed;  // the wheel's platform tags; none for a lone file
  std::vector<ElfAbi> members;       // every ELF file (a wheel's members, in zip order)
  struct Ignored {
    std::string file, reason;  // "unknown architecture (EM_...)", "aarch64 architecture", "musl libc"
  };
  std::vector<Ignored> ignored;      // ELF files auditwheel leaves out of the verdict
  bool pure = false;                 // no ELF file at all (or, tagged any, none of a known architecture)
  std::optional<std::string> error;  // auditwheel's words when there is nothing to judge
  std::optional<AbiVerdict> verdict;
  struct MemberTag {
    std::string file, tag;
  };
  std::vector<MemberTag> member_tags;  // each judged file on its own (the wheel's others provided)
  std::vector<std::string> problems;   // claims that do not hold
  std::vector<std::string> notes;      // what else a reader should know

  bool holds() const { return problems.empty(); }
  std::string arch() const { return verdict ? verdict->policies.arch : ""; }
};

// `system` finds the libraries needed from outside the wheel (null: none is looked for).
TagAudit audit_elf_file(const elf::ElfFile& file, const std::string& path, const AuditwheelPolicies& policies,
                        SystemLibraries* system);

// Reads every ELF member of `wheel` from the archive. nullopt with `error` set when a member
// cannot be read.
std::optional<TagAudit> audit_wheel(python::Wheel& wheel, const AuditwheelPolicies& policies, SystemLibraries* system,
                                    std::string* error);

}  // namespace envdoctor::python
