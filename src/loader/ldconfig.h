// The ld.so.cache that glibc 2.36's ldconfig builds for a root file system, without running it:
// what a GPU container's loader uses once the NVIDIA container toolkit has rebuilt the cache at
// start (docs/container-start.md). The rules are glibc's elf/ldconfig.c, elf/cache.c,
// elf/readlib.c, elf/readelflib.c and sysdeps/unix/sysv/linux/x86/readelflib.c, for Debian's
// x86-64 build:
//   - directories: those given on the command line, then the configuration file's (`include`
//     globs read in order, `hwcap` lines ignored, `=TYPE` suffixes cut), then the system
//     directories; one entry per directory identity (st_dev, st_ino), the first spelling kept;
//     each directory's glibc-hwcaps/* subdirectories, and the legacy ones (tls, x86_64,
//     avx512_1, haswell, xeon_phi) found in it, are searched after the directories before them;
//   - in a directory, the entries named like a DSO (lib*.so*, ld-*.so*, ld.so.*, ld64.so.*) that
//     are ET_DYN ELF files of x86-64 or i386; one per SONAME, a file before a link and else the
//     greater name (_dl_cache_libcmp); a link counts as a link only when its own name is the
//     SONAME or the SONAME's `.so` prefix, and is then filed under its own name;
//   - the cache value is DIR/SONAME (DIR/FILE in glibc-hwcaps subdirectories), and ldconfig makes
//     DIR/SONAME a link to the file where it is missing or a link to another file;
//   - entries sorted by SONAME (_dl_cache_libcmp, greatest first), then flags, glibc-hwcaps
//     entries first, then legacy hwcap bits; equal entries keep the directory order.
// Referee: real `ldconfig -r` on a copy of the root, entry by entry (tests/root/ldconfig_test.cc).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loader/ld_cache.h"
#include "loader/object_store.h"
#include "support/root.h"

namespace envdoctor::loader {

struct LdconfigOptions {
  std::vector<std::string> command_line;  // directories given as arguments, searched first
  std::string config_file = "/etc/ld.so.conf";
  // SLIBDIR and LIBDIR with Debian's additions (`ldconfig -v` on an empty root lists them).
  std::vector<std::string> system_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
  // Configuration files that are not on disk (in-root path -> text), read where the root's own
  // would be and matched by `include` globs among them: the drop-ins a hook writes before it
  // runs ldconfig. One that names an existing file replaces it.
  std::map<std::string, std::string> added_files;
};

struct LdconfigEntry {
  std::string soname;
  std::string path;  // the cache's value
  i64 flags = 0;
  u64 hwcap = 0;              // the legacy hwcap bits of the directory's path, or the ISA level
  std::string hwcaps_subdir;  // "x86-64-v3" for an entry of glibc-hwcaps/x86-64-v3; "" otherwise
};

// DIR/SONAME -> FILE (relative, in DIR): a symbolic link ldconfig creates or points anew.
struct LdconfigLink {
  std::string path;
  std::string target;
};

struct LdconfigResult {
  std::vector<std::string> dirs;  // searched, in order
  std::vector<LdconfigEntry> entries;
  std::vector<LdconfigLink> links;
};

// `_dl_cache_libcmp`: names compared with runs of digits as numbers.
int cache_libcmp(std::string_view a, std::string_view b);

// ldconfig's run on `root` (in-root paths; every file read through `store`, whose root it is).
LdconfigResult run_ldconfig(const support::FileRoot& root, ObjectStore& store, const LdconfigOptions& options);

// The cache those entries make, as ld.so reads it.
std::shared_ptr<const LdCache> cache_of(const LdconfigResult& result);

}  // namespace envdoctor::loader
