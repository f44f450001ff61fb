// The manylinux tag a file earns (PEP 600), computed from what it asks of the system, as
// auditwheel does; and whether a wheel's platform tags claim an older glibc than its files need.
//
// The policy. PEP 600's manylinux_2_N promises glibc 2.N or newer and nothing else, so a file
// may need only the libraries glibc itself installs: libc.so.6, libm.so.6, libpthread.so.0,
// libdl.so.2, librt.so.1 and the machine's dynamic linker (ld-linux-x86-64.so.2, ...). The
// floor is set by the symbol versions the file needs from them (its DT_VERNEED entries, the
// versions `objdump -T` prints beside its undefined symbols): the highest GLIBC_2.N gives
// manylinux_2_N, and GLIBC_ABI_DT_RELR, which a linker writes for -z pack-relative-relocs,
// means 2.36 (glibc 2.36 NEWS). GLIBC_PRIVATE is no promise at all. Below the oldest policy of
// the architecture (2.5 on x86_64 and i686, manylinux1; 2.17 elsewhere, manylinux2014) the
// floor is that policy, as in auditwheel's policy table. envdoctor's policy is stricter than
// auditwheel's: libstdc++ and libgcc_s, whose versions depend on the compiler and not on glibc,
// must be linked statically or shipped in the wheel.
//
// In a wheel, a library that another ELF member of the same wheel provides (by SONAME or file
// name: auditwheel's grafted ".libs" copies) is the wheel's own and not asked of the system.
#pragma once

#include <compare>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"

namespace envdoctor::python {
class Wheel;
}

namespace envdoctor::checks {

struct GlibcVersion {
  int major = 0, minor = 0;
  auto operator<=>(const GlibcVersion&) const = default;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// The libraries a manylinux file may need from the system, for an ELF machine: the five
// above and the machine's dynamic linker.
std::vector<std::string> manylinux_libraries(u16 machine);

// The platform tag's architecture for an ELF file ("x86_64", "i686", "aarch64", "ppc64le",
// "s390x"); "" for a machine no manylinux policy covers.
std::string manylinux_arch(const elf::ElfFile& file);

// "GLIBC_2.34" -> 2.34, "GLIBC_2.2.5" -> 2.2, "GLIBC_ABI_DT_RELR" -> 2.36; nullopt for a
// version that promises no glibc release (GLIBC_PRIVATE).
std::optional<GlibcVersion> glibc_version_of(std::string_view version_name);

// What one file asks of the system.
struct ManylinuxNeeds {
  std::string file;  // the path, or the wheel member's name
  std::string arch;
  // The versions that set the floor: every (library, version) at the highest glibc release.
  struct Floor {
    std::string library, version;
  };
  std::vector<Floor> floor;
  GlibcVersion glibc;          // the release those versions need (the policy minimum when none)
  size_t versions_needed = 0;  // how many glibc versions the file needs in all
  // Why no manylinux tag fits: a library outside the policy, a private glibc version, a
  // machine without a policy. Each in words for people.
  std::vector<std::string> problems;

  bool taggable() const { return problems.empty(); }
  std::string tag() const {
    return "manylinux_" + std::to_string(glibc.major) + "_" + std::to_string(glibc.minor) + "_" + arch;
  }
};

// The needs of one parsed ELF file. `provided` are the SONAMEs and file names the same wheel
// provides (empty for a lone file).
ManylinuxNeeds manylinux_needs(const elf::ElfFile& file, std::string name,
                               const std::vector<std::string>& provided = {});

// A wheel's files and its tags, held against each other.
struct WheelTagAudit {
  std::string wheel;                  // the path given
  std::vector<std::string> claimed;   // the filename's platform tags
  std::vector<ManylinuxNeeds> files;  // every ELF member, in zip order
  std::optional<GlibcVersion> glibc;  // the highest need over the members; none without ELF files
  std::string arch;
  // What is wrong with the wheel as tagged: a tag claiming an older glibc (or another machine)
  // than its files need, a member no manylinux tag fits, ELF files in a wheel tagged "any".
  std::vector<std::string> problems;

  // The tag the wheel's files earn: "manylinux_2_N_arch", or "" when none fits or it has no
  // ELF file.
  std::string tag() const;
};

// Reads every ELF member of `wheel` from the archive and audits its tags. nullopt with `error`
// set when a member cannot be read.
std::optional<WheelTagAudit> audit_wheel_tags(python::Wheel& wheel, std::string* error);

// The glibc release a platform tag claims ("manylinux_2_17_x86_64" and "manylinux2014_x86_64"
// -> 2.17, "manylinux1_x86_64" -> 2.5), and its architecture; nullopt for other tags.
struct ManylinuxTag {
  GlibcVersion glibc;
  std::string arch;
};
std::optional<ManylinuxTag> parse_manylinux_tag(std::string_view platform_tag);

}  // namespace envdoctor::checks
