// The platform tag ELF files earn, by auditwheel's rules and auditwheel's own policy data
// (python/auditwheel_policy.h), and whether a wheel's own tags claim more than that: auditwheel
// 6.8.1's wheel_abi.analyze_wheel_abi, as `auditwheel show` runs it, step for step.
//
// The files are the ELF files RECORD lists (not ending in .py), in its order; each one's tree of
// libraries is found as auditwheel's lddtree finds it (python/auditwheel_lddtree.h). The first
// file of a known architecture sets the wheel's architecture unless its name tags one (files of
// another are left out), and the C library likewise (the wheel's tags, then the files; a file of
// another is left out). The policies are auditwheel's choice for that C library (one musllinux
// policy, Android's of the wheel's API level); without any file that names its C library, this
// machine's. The files whose libraries count are the extension modules and the files no other
// file names in NEEDED; a file that is no extension module and misses a library borrows the tree
// of the first fully resolved file that loads it (_fixup_elf_trees).
//
// For each policy, a file's external libraries are those its tree needs outside the policy's
// whitelist and outside the wheel (found or not), through the libraries outside the whitelist;
// its blacklisted symbols are those of a blacklisted library it names in NEEDED that it leaves
// undefined. The verdict (`AbiVerdict`) is the lowest of:
//   - the symbol policy: for each policy, the best policy that allows every version the files
//     need together with those the policy's external libraries found here need (prefix by prefix:
//     GLIBC_, GLIBCXX_, ZLIB_, ...; a prefix a policy lists with no version allows none of it),
//     capped at that policy; the best of those, the first to reach it by ascending priority;
//   - the best policy with no external library, and the best with no blacklisted symbol;
//   - linux when an extension module references PyFPE_jbuf or (Python 2) PyUnicodeUCS2_*, or a
//     file needs an ISA extension (x86-64-v2 and up; for an external library that needs one, the
//     best policy that whitelists it).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "python/auditwheel_lddtree.h"
#include "python/auditwheel_policy.h"

namespace envdoctor::python {
class Wheel;
}

namespace envdoctor::python {

// What keeps a set of files from one policy. Empty for every policy the files meet.
struct PolicyBarrier {
  std::map<std::string, std::set<std::string>> too_new;      // library -> versions the policy lacks
  std::set<std::string> libs_to_eliminate;                   // libraries outside its whitelist
  std::map<std::string, std::set<std::string>> blacklisted;  // library -> symbols it forbids
};

struct AbiVerdict {
  PolicySet policies;
  std::vector<PolicyBarrier> barriers;       // one per policy, in `policies` order
  size_t overall = 0, sym = 0, machine = 0;  // indices into policies.policies
  bool pyfpe = false, ucs2 = false, unsupported_isa = false;
  // Over every file, with the version needs of the external libraries of the symbol policy's choice.
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
  struct Member {
    std::string file;     // the member's name, or the path given
    std::string arch;     // "" for a machine auditwheel does not know
    std::string machine;  // what the header says
    int python_extension = 0;
  };
  std::vector<Member> members;  // the ELF files judged (a wheel's, in RECORD's order)
  struct Ignored {
    std::string file, reason;  // "unknown architecture (EM_...)", "aarch64 architecture", "musl libc"
  };
  std::vector<Ignored> ignored;      // ELF files auditwheel leaves out of the verdict
  bool pure = false;                 // no ELF file at all (or, tagged any, none of a known architecture)
  std::optional<std::string> error;  // auditwheel's words when there is nothing to judge
  std::optional<AbiVerdict> verdict;
  // For the claims of a musl wheel: every musllinux policy of the data (auditwheel's own verdict
  // holds the files to one of them); otherwise none, and the claims are held to `verdict`.
  std::optional<AbiVerdict> claims_verdict;
  struct MemberTag {
    std::string file, tag;
  };
  std::vector<MemberTag> member_tags;  // each judged file on its own (the wheel's others provided)
  std::vector<std::string> problems;   // claims that do not hold
  std::vector<std::string> notes;      // what else a reader should know

  bool holds() const { return problems.empty(); }
  std::string arch() const { return verdict ? verdict->policies.arch : ""; }
};

// A lone ELF file, judged as auditwheel judges a wheel whose one file it is, its RPATH and
// RUNPATH read where it lies: what they find is outside any wheel.
TagAudit audit_elf_file(const std::string& path, const AuditwheelPolicies& policies, LddHost& host);

// Reads every ELF member of `wheel` from the archive. nullopt with `error` set when a member
// cannot be read.
std::optional<TagAudit> audit_wheel(python::Wheel& wheel, const AuditwheelPolicies& policies, LddHost& host,
                                    std::string* error);

}  // namespace envdoctor::python
