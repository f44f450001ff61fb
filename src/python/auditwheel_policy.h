// auditwheel's platform policies, read from its own data (data/auditwheel/, copied unchanged from
// pypa/auditwheel; the README there names the commit).
//
// A policy is a platform tag (manylinux_2_17, musllinux_1_2, or the catch-all "linux") with a
// priority: the higher, the more systems it promises to run on. For one architecture it says
// which symbol versions a file may need, grouped by their prefix ("GLIBC" -> GLIBC_2.2.5 ...
// GLIBC_2.17, "GLIBCXX", "CXXABI", "GCC", "ZLIB", ...); which libraries it may need from the
// system (`lib_whitelist`); and which symbols of those libraries it must not use (`blacklist`:
// zlib's internals, glibc functions that the oldest systems lack). A policy that the data does
// not define for an architecture does not exist there: manylinux_2_5 is x86_64's and i686's
// oldest, manylinux_2_17 aarch64's, ppc64le's, s390x's and armv7l's, manylinux_2_31 riscv64's.
//
// musl's policies name the C library "libc.so"; on each architecture it is musl's own SONAME
// (libc.musl-x86_64.so.1, ...), as auditwheel rewrites it. A wheel is judged against one musl
// policy only, and an Android wheel against the one of its own API level (wheel_policies).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::python {

enum class Libc { kGlibc, kMusl, kAndroid };

// "manylinux", "musllinux" or "android": the tag prefix of a C library's policies.
std::string_view libc_tag_prefix(Libc libc);
// "glibc", "musl" or "android".
std::string_view libc_name(Libc libc);

struct Policy {
  std::string name;                  // with the architecture: "manylinux_2_17_x86_64", "linux_x86_64"
  std::vector<std::string> aliases;  // "manylinux2014_x86_64"
  int priority = 0;                  // 0 for linux
  // Prefix -> every version name it allows, prefix included ("GLIBC" -> {"GLIBC_2.2.5", ...}).
  std::map<std::string, std::set<std::string>> symbol_versions;
  std::set<std::string> whitelist;
  std::map<std::string, std::set<std::string>> blacklist;  // library -> symbols

  bool is_linux() const { return priority == 0; }
  bool named(std::string_view tag) const;
};

// The policies of one C library and one architecture, by ascending priority: the first is
// "linux_<arch>", which every file meets; the last the most widely compatible.
struct PolicySet {
  Libc libc = Libc::kGlibc;
  std::string arch;
  std::vector<Policy> policies;

  const Policy& linux_policy() const { return policies.front(); }
  const Policy& highest() const { return policies.back(); }
  const Policy* find(std::string_view tag) const;
};

class AuditwheelPolicies {
 public:
  // Reads manylinux-policy.json, musllinux-policy.json and android-policy.json from
  // `<data_dir>/auditwheel`; nullopt with `error` set when one is missing or malformed.
  static std::optional<AuditwheelPolicies> load(const std::string& data_dir, std::string* error);

  // The policies for `arch` ("x86_64", "armv7l", ...); only linux_<arch> when the data defines
  // none for it.
  PolicySet for_arch(Libc libc, std::string_view arch) const;

  // The policies a wheel is judged against, as auditwheel's WheelPolicies chooses them: for glibc
  // every one of the architecture; for musl linux and one musllinux policy, `musl_policy`
  // ("musllinux_1_2": the host's musl, auditwheel's Libc.get_current_version) or, when the host
  // has none, the newest the data defines; for Android linux and the newest API level at or below
  // the wheel's one platform tag, named after that tag. nullopt with `error` in auditwheel's
  // words where auditwheel stops (an Android wheel with several platform tags or none it serves).
  std::optional<PolicySet> wheel_policies(Libc libc, std::string_view arch, const std::vector<std::string>& platforms,
                                          const std::optional<std::string>& musl_policy, std::string* error) const;

  // Where the data came from, for the reports: "pypa/auditwheel 6.8.1 (94e0693e...)".
  static std::string_view source();

 private:
  struct Entry {
    std::string name;
    std::vector<std::string> aliases;
    int priority = 0;
    std::map<std::string, std::map<std::string, std::vector<std::string>>> symbol_versions;  // arch -> prefix
    std::vector<std::string> whitelist;
    std::map<std::string, std::set<std::string>> blacklist;
  };
  std::vector<Entry> manylinux_, musllinux_, android_;
};

}  // namespace envdoctor::python
