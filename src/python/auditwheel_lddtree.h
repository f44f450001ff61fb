// How `auditwheel show` finds the libraries of a wheel's ELF files: its lddtree (auditwheel's
// src/auditwheel/lddtree.py, from pax-utils), which is not the loader. python/manylinux.h judges
// what it finds; this only finds it, as auditwheel 6.8.1 does.
//
// auditwheel extracts the wheel into a temporary directory and walks each ELF file it lists in
// RECORD. For each NEEDED entry (a name met once per tree: the first resolution wins) it tries, in
// this order: the RPATH of the file the walk started from, the file's own RPATH, its own RUNPATH,
// $AUDITWHEEL_LD_LIBRARY_PATH and $LD_LIBRARY_PATH, the RUNPATH of the file the walk started from,
// the directories of /etc/ld.so.conf (its `include` globs in directory order; for musl
// /etc/ld-musl-*.path or /lib:/usr/local/lib:/usr/lib) followed by /lib, /lib64, /usr/lib and
// /usr/lib64, and the directory of the program interpreter. ld.so.cache is never read. A RPATH is
// ignored when a RUNPATH names an existing directory; $ORIGIN is the file's directory (in the
// temporary one for a wheel's member), an empty entry the current directory (the temporary one),
// and a directory that does not exist is dropped. A candidate counts when it is an ELF file of the
// same class, byte order, machine and OS ABI (System V and GNU/Linux are one); its own symbolic
// links are followed, its directories' are not. libpython is never looked for. Android wheels are
// cross-compiled: for them only $AUDITWHEEL_LD_LIBRARY_PATH and the files' own paths count.
//
// A wheel's members are read from the archive, never extracted: `LddFiles` answers for the
// temporary directory auditwheel would make (a name in $TMPDIR, as Python's tempfile picks it)
// from the members, and for every other path from this machine.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "python/auditwheel_policy.h"

namespace envdoctor::python {

// What auditwheel reads of an ELF file (pyelftools' view): its architecture, from the header's
// machine, class and byte order (and, for armv7l, the EABI version 5 hard-float flags; for x86_64,
// the ISA level a GNU property note says it needs); its C library (the program interpreter, then
// NEEDED entries, then the file name); its dynamic entries; the symbol versions it needs of each
// library (the dynamic linker's own excepted); its undefined symbols; and whether it is a Python
// extension module (the first of PyInit_<name>, init<name> or _cffi_pypyinit_<name> it defines).
struct ElfAbi {
  std::string file;  // the path, or the wheel member's name
  u16 e_machine = 0;
  u8 elf_class = 0, data = 0, osabi = 0;
  std::string arch;     // "x86_64", "armv7l", ...; "" when auditwheel knows no such architecture
  std::string machine;  // "EM_ARM, ELFCLASS32, little-endian (soft-float)": what the header says
  std::string isa;      // "x86_64_v3" when a property note asks more than the baseline; "" otherwise
  bool isa_unsupported = false;
  std::optional<Libc> libc;
  int python_extension = 0;  // 3: defines PyInit_<name>; 2: init<name> or _cffi_pypyinit_<name>
  std::optional<std::string> soname, interp, rpath, runpath;
  std::vector<std::string> needed;
  std::map<std::string, std::set<std::string>> versions;  // library -> version names it needs
  std::set<std::string> undefined;                        // non-weak undefined dynamic symbols
  bool pyfpe = false;                                     // references PyFPE_jbuf, PyFPE_dummy or PyFPE_counter
  bool ucs2 = false;                                      // references PyUnicodeUCS2_* functions
};

ElfAbi read_elf_abi(const elf::ElfFile& file, std::string name);
// A file with an ELF header that the loader would not map (a relocatable object, a core file):
// auditwheel still reads its header. nullopt when `bytes` holds no ELF header at all.
std::optional<ElfAbi> read_elf_header_abi(Bytes bytes, std::string name);

// Python's os.path.normpath of a POSIX path, with lddtree's "//" -> "/".
std::string lddtree_normpath(const std::string& path);

// This machine as auditwheel's lddtree reads it: the environment's library paths, /etc/ld.so.conf,
// the C library, and every file it opens (parsed once, for every FILE of a run).
class LddHost {
 public:
  struct Facts {
    std::string ld_library_path, auditwheel_ld_library_path;  // "" when unset
    std::string cwd;                                          // where envdoctor runs
    std::string tmpdir;                                       // Python's tempfile.gettempdir(), resolved
  };
  static Facts facts_from_environment();
  explicit LddHost(Facts facts) : facts_(std::move(facts)) {}

  const Facts& facts() const { return facts_; }
  // The directories of /etc/ld.so.conf that exist, then the trusted ones (load_ld_paths); for
  // musl, those of /etc/ld-musl-*.path or musl's own. `libc` unknown: glibc's.
  const std::vector<std::string>& conf_dirs(std::optional<Libc> libc);
  // auditwheel's Libc.detect(): musl when /lib holds exactly one libc.musl-*.so.1, else glibc.
  Libc libc();
  // "musllinux_1_2" for the musl of this machine (what its loader says of itself), nullopt without one.
  const std::optional<std::string>& musl_policy();
  // The ELF file at `path` (absolute), read once; null when it cannot be read or is not ELF.
  const ElfAbi* elf(const std::string& path);

 private:
  Facts facts_;
  std::optional<std::vector<std::string>> conf_, musl_conf_;
  std::optional<Libc> libc_;
  std::optional<std::optional<std::string>> musl_policy_;
  std::map<std::string, std::unique_ptr<ElfAbi>> files_;
};

// The files one walk sees: a wheel's members under `root` (auditwheel's temporary directory, also
// the current directory then), everything else from `host`. Without a root (a lone FILE), every
// path is the host's and the current directory is envdoctor's.
class LddFiles {
 public:
  LddFiles(LddHost& host, std::optional<std::string> root);
  LddHost& host() { return host_; }
  const std::string& cwd() const { return cwd_; }
  const std::optional<std::string>& root() const { return root_; }
  // A member, by its name in the wheel; `elf` is null for a file that is not ELF.
  void add_member(const std::string& name, std::unique_ptr<ElfAbi> elf);

  std::string absolute(const std::string& path) const;  // os.path.abspath
  bool is_dir(const std::string& path) const;
  bool exists(const std::string& path) const;
  // lddtree.readlink: `path` with its own symbolic links followed (not its directories'), normalized.
  std::string follow_links(const std::string& path) const;
  const ElfAbi* elf(const std::string& path);
  // auditwheel's tools.is_subdir(path, root): a file of the wheel.
  bool in_wheel(const std::string& path) const;

 private:
  bool member_path(const std::string& absolute) const;
  LddHost& host_;
  std::optional<std::string> root_;
  std::string cwd_;
  std::map<std::string, std::unique_ptr<ElfAbi>> members_;  // absolute path -> the member (null: not ELF)
  std::set<std::string> dirs_;                              // absolute paths of the directories they make
};

// One library of a tree, as the walk found it.
struct DynamicLibrary {
  std::string soname;
  std::optional<std::string> path, realpath;  // none: not found
  const ElfAbi* elf = nullptr;                // the file found
  std::vector<std::string> needed;
};

// lddtree.ldd of one file: its NEEDED entries and every library of its tree by name.
struct DynamicExecutable {
  std::string path;  // as given (a member's name: relative to the temporary directory)
  const ElfAbi* elf = nullptr;
  std::vector<std::string> needed;
  std::map<std::string, DynamicLibrary> libraries;
};

// The tree of the ELF file at `path` (a member's name, or a host path). `cross_compiled` (an
// Android wheel): this machine's own directories are not searched.
DynamicExecutable lddtree(LddFiles& files, const std::string& path, bool cross_compiled);

// The dynamic linker: never a dependency to judge (auditwheel's policy/__init__.py, filter_libs).
bool is_dynamic_linker(std::string_view lib);
// libpython3.11.so.1.0 and the like: never looked for (auditwheel's LIBPYTHON_RE).
bool is_libpython(std::string_view lib);

}  // namespace envdoctor::python
