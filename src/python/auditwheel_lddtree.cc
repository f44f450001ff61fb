#include "python/auditwheel_lddtree.h"

#include <glob.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/subprocess.h"

namespace envdoctor::python {

namespace {

namespace fs = std::filesystem;

constexpr u16 kEmRiscv = 243;  // EM_RISCV, EM_LOONGARCH: absent from older <elf.h>
constexpr u16 kEmLoongarch = 258;
// ARM's e_flags (elf.h's EF_ARM_*): the EABI version in the top byte, and hard-float.
constexpr u32 kArmEabiMask = 0xff000000, kArmEabiVer5 = 0x05000000, kArmAbiFloatHard = 0x400;

// posixpath.basename and posixpath.dirname.
std::string path_basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }
std::string path_dirname(const std::string& path) {
  std::string head = path.substr(0, path.rfind('/') + 1);
  if (head.find_first_not_of('/') != std::string::npos)
    while (!head.empty() && head.back() == '/') head.pop_back();
  return head;
}
// posixpath.join of two parts: an absolute second part replaces the first.
std::string path_join(const std::string& a, const std::string& b) {
  if (b.starts_with('/') || a.empty()) return b;
  return a.ends_with('/') ? a + b : a + "/" + b;
}

// posixpath.normpath (two leading slashes are kept, as POSIX allows).
std::string python_normpath(const std::string& path) {
  if (path.empty()) return ".";
  size_t slashes = path.starts_with("//") && !path.starts_with("///") ? 2 : path.starts_with('/') ? 1 : 0;
  std::vector<std::string> parts;
  std::istringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (part.empty() || part == ".") continue;
    if (part != ".." || (!slashes && parts.empty()) || (!parts.empty() && parts.back() == "..")) parts.push_back(part);
    else if (!parts.empty()) parts.pop_back();
  }
  std::string out(slashes, '/');
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

std::vector<std::string> dedupe(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& s : items)
    if (seen.insert(s).second) out.push_back(s);
  return out;
}

std::string machine_words(u16 machine, u8 elf_class, u8 data) {
  return "e_machine " + std::to_string(machine) + ", " + elf::elf_class_name(elf_class) + ", " +
         (data == ELFDATA2MSB ? "big-endian" : "little-endian");
}

// lddtree._get_platform: the architecture is the machine, class and byte order together; an ARM
// file must say EABI version 5 and hard-float to be armv7l.
void read_architecture(ElfAbi& a, u32 e_flags, std::optional<u32> x86_isa_needed) {
  a.machine = machine_words(a.e_machine, a.elf_class, a.data);
  bool le = a.data == ELFDATA2LSB, b64 = a.elf_class == ELFCLASS64;
  switch (a.e_machine) {
    case EM_386: a.arch = !b64 && le ? "i686" : ""; break;
    case EM_X86_64: a.arch = b64 && le ? "x86_64" : ""; break;
    case EM_PPC64: a.arch = b64 ? (le ? "ppc64le" : "ppc64") : ""; break;
    case kEmRiscv: a.arch = b64 && le ? "riscv64" : ""; break;
    case EM_AARCH64: a.arch = b64 && le ? "aarch64" : ""; break;
    case EM_S390: a.arch = b64 && !le ? "s390x" : ""; break;
    case kEmLoongarch: a.arch = b64 && le ? "loongarch64" : ""; break;
    case EM_ARM:
      if (b64 || !le) break;
      if ((e_flags & kArmEabiMask) != kArmEabiVer5) a.machine += " (Invalid ARM EABI version for armv7l)";
      else if ((e_flags & kArmAbiFloatHard) != kArmAbiFloatHard) a.machine += " (armv7l shall use hard-float)";
      else a.arch = "armv7l";
      break;
  }
  if (a.arch != "x86_64" || !x86_isa_needed) return;
  u32 isa = *x86_isa_needed & ~u32{1};  // the baseline bit asks nothing
  if (isa & 8) a.isa = "x86_64_v4";
  else if (isa & 4) a.isa = "x86_64_v3";
  else if (isa & 2) a.isa = "x86_64_v2";
  else if (isa != 0) a.isa = "an unknown x86_64 ISA";
  a.isa_unsupported = !a.isa.empty();
}

// lddtree.ldd: the interpreter names the C library, then the NEEDED entries, then the extension
// module's file name.
std::optional<Libc> read_libc(const ElfAbi& a) {
  if (a.interp) return path_basename(*a.interp).starts_with("ld-musl-") ? Libc::kMusl : Libc::kGlibc;
  for (const std::string& lib : a.needed) {
    if (lib.starts_with("libc.musl-") || lib.starts_with("ld-musl-")) return Libc::kMusl;
    if (lib == "libc.so.6" || lib.starts_with("ld-linux-") || lib.starts_with("ld64.so.")) return Libc::kGlibc;
  }
  std::string base = path_basename(a.file);
  if (base.ends_with("-arm-linux-musleabihf.so") || base.ends_with("-linux-musl.so")) return Libc::kMusl;
  if (base.ends_with("-arm-linux-gnueabihf.so") || base.ends_with("-linux-gnu.so")) {
    // Before CPython 3.11 musl builds said linux-gnu too: only cpython-311 and later tell.
    static const std::regex soabi(R"(\.cpython-3(\d\d)[^.]*-[^.]*\.so$)");
    std::smatch m;
    if (std::regex_search(base, m, soabi) && std::stoi(m[1]) >= 11) return Libc::kGlibc;
  }
  return std::nullopt;
}

// Every $ORIGIN and ${ORIGIN} of `entry` replaced with `origin` (lddtree's ORIGIN_RE).
std::string expand_origin(const std::string& entry, const std::string& origin) {
  std::string out;
  for (size_t i = 0; i < entry.size();) {
    size_t len = entry.compare(i, 7, "$ORIGIN") == 0 ? 7 : entry.compare(i, 9, "${ORIGIN}") == 0 ? 9 : 0;
    out += len ? origin : std::string(1, entry[i]);
    i += len ? len : 1;
  }
  return out;
}

// Where the walk looks besides the files' own paths: auditwheel's load_ld_paths.
struct LdPaths {
  std::vector<std::string> conf, env, interp;
};

// lddtree.parse_ld_paths: "" is the current directory, $ORIGIN the directory of `origin_of`
// (none: the entry is dropped, where auditwheel stops), anything else is `root` + the entry;
// only existing directories are kept.
std::vector<std::string> parse_ld_paths(const LddFiles& files, const std::string& list, const std::string& origin_of,
                                        const std::string& root) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::istringstream in(list + ":");
  for (std::string entry; std::getline(in, entry, ':');) {
    std::string dir;
    if (entry.empty()) dir = files.cwd();
    else if (entry.find("$ORIGIN") != std::string::npos || entry.find("${ORIGIN}") != std::string::npos) {
      if (origin_of.empty()) continue;
      dir = expand_origin(entry, path_dirname(files.absolute(origin_of)));
    } else dir = root + entry;
    out.push_back(lddtree_normpath(dir));
  }
  std::vector<std::string> kept;
  for (const std::string& dir : dedupe(out))
    if (files.is_dir(dir)) kept.push_back(dir);
  return kept;
}

// lddtree.parse_ld_so_conf on this machine: lines without their comments, `include` globs in
// the order the directory lists them (Python's glob), each file's paths in turn.
void parse_ld_so_conf(const std::string& conf, std::vector<std::string>& out, int depth = 0) {
  std::ifstream in(conf);
  if (!in || depth > 16) return;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    size_t b = line.find_first_not_of(" \t\r\n\f\v"), e = line.find_last_not_of(" \t\r\n\f\v");
    if (b == std::string::npos) continue;
    line = line.substr(b, e - b + 1);
    if (line.starts_with("include ")) {
      std::string pattern = line.substr(8);
      size_t first = pattern.find_first_not_of('/');
      if (first == std::string::npos) continue;  // "include /": no file to read
      pattern = pattern.starts_with('/') ? "/" + pattern.substr(first) : path_dirname(conf) + "/" + pattern;
      glob_t found{};
      if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found) == 0)
        for (size_t i = 0; i < found.gl_pathc; ++i) parse_ld_so_conf(found.gl_pathv[i], out, depth + 1);
      ::globfree(&found);
    } else {
      out.push_back(lddtree_normpath("/" + line));
    }
  }
}

bool compatible(const ElfAbi& a, const ElfAbi& b) {
  // lddtree.Platform.is_compatible: ELFOSABI_SYSV (0) and ELFOSABI_GNU (3) are one.
  auto linux_abi = [](u8 osabi) { return osabi == ELFOSABI_SYSV || osabi == ELFOSABI_GNU; };
  return (a.osabi == b.osabi || (linux_abi(a.osabi) && linux_abi(b.osabi))) && a.elf_class == b.elf_class &&
         a.data == b.data && a.e_machine == b.e_machine;
}

struct Walk {
  LddFiles& files;
  LdPaths paths;
  std::vector<std::string> top_rpath, top_runpath;
  std::map<std::string, DynamicLibrary>& all;
};

// The file's own RPATH and RUNPATH as lddtree reads them: RPATH dropped when RUNPATH names a
// directory that exists.
std::pair<std::vector<std::string>, std::vector<std::string>> own_paths(const LddFiles& files, const ElfAbi& elf,
                                                                        const std::string& path) {
  std::vector<std::string> rpath, runpath;
  if (elf.rpath) rpath = parse_ld_paths(files, *elf.rpath, path, "/");
  if (elf.runpath) runpath = parse_ld_paths(files, *elf.runpath, path, "/");
  if (!runpath.empty()) rpath.clear();
  return {rpath, runpath};
}

// lddtree.find_lib: the first candidate that is an ELF file compatible with `elf`.
const ElfAbi* find_lib(LddFiles& files, const ElfAbi& elf, const std::string& lib,
                       const std::vector<std::string>& search, DynamicLibrary& out) {
  for (const std::string& dir : search) {
    std::string path = path_join(dir, lib);
    std::string target = files.follow_links(path);
    if (!files.exists(target)) continue;
    const ElfAbi* found = files.elf(target);
    if (!found || !compatible(elf, *found)) continue;  // auditwheel stops at a file that is not ELF
    out.path = path;
    out.realpath = target;
    return found;
  }
  return nullptr;
}

void resolve_needed(Walk& w, const ElfAbi& elf, const std::string& path) {
  auto [rpath, runpath] = own_paths(w.files, elf, path);
  std::vector<std::string> search = w.top_rpath;
  for (const auto* part : {&rpath, &runpath, &w.paths.env, &w.top_runpath, &w.paths.conf, &w.paths.interp})
    search.insert(search.end(), part->begin(), part->end());
  for (const std::string& soname : elf.needed) {
    if (w.all.count(soname)) continue;
    DynamicLibrary& lib = w.all[soname];  // a std::map: stays valid while the walk adds more
    lib.soname = soname;
    if (is_libpython(soname)) continue;  // auditwheel's issue 589: libpython is never looked for
    const ElfAbi* found = find_lib(w.files, elf, soname, search, lib);
    if (!found) continue;
    resolve_needed(w, *found, *lib.realpath);
    lib.elf = found;
    lib.needed = found->needed;
  }
}

}  // namespace

std::string lddtree_normpath(const std::string& path) {
  std::string out = python_normpath(path);
  for (size_t at; (at = out.find("//")) != std::string::npos;) out.replace(at, 2, "/");
  return out;
}

bool is_dynamic_linker(std::string_view lib) {
  return lib.find("ld-linux") != std::string_view::npos || lib == "ld64.so.1" || lib == "ld64.so.2";
}

bool is_libpython(std::string_view lib) {
  static const std::regex libpython(R"(^libpython\d+\.\d+m?.so(\.\d)*$)");
  return std::regex_match(lib.begin(), lib.end(), libpython);
}

ElfAbi read_elf_abi(const elf::ElfFile& f, std::string name) {
  ElfAbi a;
  a.file = std::move(name);
  a.e_machine = f.machine;
  a.elf_class = f.elf_class;
  a.data = f.data;
  a.osabi = f.osabi;
  read_architecture(a, f.header_flags, f.x86_isa_needed);
  if (f.soname) a.soname = std::string(*f.soname);
  if (f.interp) a.interp = std::string(*f.interp);
  if (f.rpath) a.rpath = std::string(*f.rpath);
  if (f.runpath) a.runpath = std::string(*f.runpath);
  for (std::string_view lib : f.needed) a.needed.emplace_back(lib);
  a.libc = read_libc(a);
  // elfutils.elf_find_versioned_symbols: the dynamic linker's own versions do not count.
  for (const elf::VersionNeed& need : f.verneed) {
    if (need.file.starts_with("ld-linux") || need.file == "ld64.so.1" || need.file == "ld64.so.2") continue;
    for (const elf::VersionNeedAux& aux : need.versions) a.versions[std::string(need.file)].emplace(aux.name);
  }
  // elfutils.elf_is_python_extension: the first init function of the file's module name it defines.
  std::string base = path_basename(a.file), module = base.substr(0, base.find('.'));
  const std::pair<std::string, int> inits[] = {
      {"init" + module, 2}, {"PyInit_" + module, 3}, {"_cffi_pypyinit_" + module, 2}};
  for (u32 i = 1; i < f.symbol_count(); ++i) {
    std::optional<elf::Symbol> s = f.symbol(i);
    if (!s) continue;
    if (s->defined()) {
      if (!a.python_extension && s->type == STT_FUNC)
        for (const auto& [init, version] : inits)
          if (s->name == init) a.python_extension = version;
      continue;
    }
    if (s->bind != STB_WEAK) a.undefined.emplace(s->name);
    if ((s->name == "PyFPE_jbuf" || s->name == "PyFPE_dummy" || s->name == "PyFPE_counter") &&
        (s->type == STT_FUNC || s->type == STT_NOTYPE))
      a.pyfpe = true;
    if (s->name.find("PyUnicodeUCS2_") != std::string_view::npos && s->type == STT_FUNC) a.ucs2 = true;
  }
  return a;
}

std::optional<ElfAbi> read_elf_header_abi(Bytes bytes, std::string name) {
  const u8* h = bytes.at(0, EI_NIDENT);
  if (!h || std::memcmp(h, ELFMAG, SELFMAG) != 0) return std::nullopt;
  u8 elf_class = h[EI_CLASS], data = h[EI_DATA];
  if ((elf_class != ELFCLASS32 && elf_class != ELFCLASS64) || (data != ELFDATA2LSB && data != ELFDATA2MSB))
    return std::nullopt;
  const u8* header = bytes.at(0, elf_class == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
  if (!header) return std::nullopt;
  auto field = [&](size_t off, size_t size) {
    u32 v = 0;
    for (size_t i = 0; i < size; ++i) v |= u32{header[off + (data == ELFDATA2LSB ? i : size - 1 - i)]} << (8 * i);
    return v;
  };
  ElfAbi a;
  a.file = std::move(name);
  a.elf_class = elf_class;
  a.data = data;
  a.osabi = h[EI_OSABI];
  a.e_machine = static_cast<u16>(field(offsetof(Elf32_Ehdr, e_machine), 2));
  u32 flags = field(elf_class == ELFCLASS64 ? offsetof(Elf64_Ehdr, e_flags) : offsetof(Elf32_Ehdr, e_flags), 4);
  read_architecture(a, flags, std::nullopt);
  a.libc = read_libc(a);
  return a;
}

LddHost::Facts LddHost::facts_from_environment() {
  Facts f;
  if (const char* v = std::getenv("LD_LIBRARY_PATH")) f.ld_library_path = v;
  if (const char* v = std::getenv("AUDITWHEEL_LD_LIBRARY_PATH")) f.auditwheel_ld_library_path = v;
  std::error_code ec;
  f.cwd = fs::current_path(ec).string();
  // tempfile.gettempdir(): $TMPDIR, $TEMP, $TMP, then /tmp, /var/tmp, /usr/tmp: the first writable.
  std::vector<std::string> candidates;
  for (const char* var : {"TMPDIR", "TEMP", "TMP"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back(v);
  candidates.insert(candidates.end(), {"/tmp", "/var/tmp", "/usr/tmp"});
  for (const std::string& c : candidates)
    if (fs::is_directory(c, ec) && ::access(c.c_str(), W_OK | X_OK) == 0) {
      f.tmpdir = fs::canonical(fs::absolute(c, ec), ec).string();
      break;
    }
  if (f.tmpdir.empty()) f.tmpdir = f.cwd;
  return f;
}

const std::vector<std::string>& LddHost::conf_dirs(std::optional<Libc> libc) {
  if (libc == Libc::kMusl) {
    if (!musl_conf_) {
      // musl's ldso/dynlink.c: /etc/ld-musl-ARCH.path, else its built-in list.
      glob_t found{};
      std::vector<std::string> dirs = {"/lib", "/usr/local/lib", "/usr/lib"};
      if (::glob("/etc/ld-musl-*.path", 0, nullptr, &found) == 0 && found.gl_pathc == 1) {
        dirs.clear();
        std::ifstream in(found.gl_pathv[0]);
        std::stringstream text;
        text << in.rdbuf();
        std::istringstream parts(text.str());
        for (std::string part; std::getline(parts, part, ':');) {
          size_t b = part.find_first_not_of(" \t\r\n\f\v"), e = part.find_last_not_of(" \t\r\n\f\v");
          if (b != std::string::npos) dirs.push_back(lddtree_normpath("/" + part.substr(b, e - b + 1)));
        }
      }
      ::globfree(&found);
      musl_conf_ = std::move(dirs);
    }
    return *musl_conf_;
  }
  if (!conf_) {
    std::vector<std::string> listed;
    parse_ld_so_conf("/etc/ld.so.conf", listed);
    std::vector<std::string> dirs;
    std::error_code ec;
    for (const std::string& d : dedupe(listed))
      if (fs::is_directory(d, ec)) dirs.push_back(d);
    // "the trusted directories are not necessarily in ld.so.conf" (load_ld_paths)
    dirs.insert(dirs.end(), {"/lib", "/lib64", "/usr/lib", "/usr/lib64"});
    conf_ = std::move(dirs);
  }
  return *conf_;
}

Libc LddHost::libc() {
  if (!libc_) {
    glob_t found{};
    libc_ =
        ::glob("/lib/libc.musl-*.so.1", 0, nullptr, &found) == 0 && found.gl_pathc == 1 ? Libc::kMusl : Libc::kGlibc;
    ::globfree(&found);
  }
  return *libc_;
}

const std::optional<std::string>& LddHost::musl_policy() {
  if (musl_policy_) return *musl_policy_;
  musl_policy_.emplace();
  // auditwheel's libc._get_musl_version: musl's loader, run bare, says "Version 1.2.4" on stderr.
  glob_t found{};
  if (::glob("/lib/libc.musl-*.so.1", 0, nullptr, &found) == 0 && found.gl_pathc == 1) {
    std::string error;
    std::optional<support::ProcessResult> r =
        support::run_process({found.gl_pathv[0]}, std::chrono::seconds(10), 1 << 16, &error);
    std::smatch m;
    static const std::regex version(R"(Version (\d+).(\d+).(\d+))");
    if (r && std::regex_search(r->err, m, version)) *musl_policy_ = "musllinux_" + m[1].str() + "_" + m[2].str();
  }
  ::globfree(&found);
  return *musl_policy_;
}

const ElfAbi* LddHost::elf(const std::string& path) {
  auto [it, added] = files_.try_emplace(path);
  if (!added) return it->second.get();
  std::string error;
  std::shared_ptr<const MappedFile> file = MappedFile::open(path, &error);
  if (!file) return nullptr;
  if (std::unique_ptr<elf::ElfFile> parsed = elf::ElfFile::parse(file, &error))
    it->second = std::make_unique<ElfAbi>(read_elf_abi(*parsed, path));
  else if (std::optional<ElfAbi> header = read_elf_header_abi(file->bytes(), path))
    it->second = std::make_unique<ElfAbi>(std::move(*header));
  return it->second.get();
}

LddFiles::LddFiles(LddHost& host, std::optional<std::string> root)
    : host_(host), root_(std::move(root)), cwd_(root_ ? *root_ : host.facts().cwd) {}

void LddFiles::add_member(const std::string& name, std::unique_ptr<ElfAbi> elf) {
  std::string path = absolute(name);
  for (std::string dir = path_dirname(path); member_path(dir) && dir != *root_; dir = path_dirname(dir))
    dirs_.insert(dir);
  members_[path] = std::move(elf);
}

std::string LddFiles::absolute(const std::string& path) const {
  return python_normpath(path.starts_with('/') ? path : cwd_ + "/" + path);
}

bool LddFiles::member_path(const std::string& absolute) const {
  return root_ && (absolute == *root_ || (absolute.starts_with(*root_) && absolute[root_->size()] == '/'));
}

bool LddFiles::is_dir(const std::string& path) const {
  std::string a = absolute(path);
  std::error_code ec;
  if (member_path(a)) return a == *root_ || dirs_.count(a);
  return fs::is_directory(a, ec);
}

bool LddFiles::exists(const std::string& path) const {
  std::string a = absolute(path);
  std::error_code ec;
  if (member_path(a)) return a == *root_ || dirs_.count(a) || members_.count(a);
  return fs::exists(a, ec);
}

std::string LddFiles::follow_links(const std::string& path) const {
  std::string p = path;
  std::error_code ec;
  for (int hops = 0; hops < 40; ++hops) {
    std::string a = absolute(p);
    if (member_path(a) || !fs::is_symlink(a, ec)) break;
    fs::path target = fs::read_symlink(a, ec);
    if (ec) break;
    p = path_join(path_dirname(p), target.string());
  }
  return lddtree_normpath(p);
}

const ElfAbi* LddFiles::elf(const std::string& path) {
  std::string a = absolute(path);
  if (!member_path(a)) return host_.elf(a);
  auto it = members_.find(a);
  return it == members_.end() ? nullptr : it->second.get();
}

bool LddFiles::in_wheel(const std::string& path) const { return member_path(absolute(path)); }

DynamicExecutable lddtree(LddFiles& files, const std::string& path, bool cross_compiled) {
  DynamicExecutable t;
  t.path = path;
  t.elf = files.elf(path);
  if (!t.elf) return t;
  const ElfAbi& e = *t.elf;
  t.needed = e.needed;
  // load_ld_paths, or for Android the empty --ldpaths auditwheel gives it (ld_paths_from_arg).
  Walk w{files, {}, {}, {}, t.libraries};
  if (cross_compiled) {
    w.paths.env = parse_ld_paths(files, files.host().facts().auditwheel_ld_library_path, "", "");
  } else {
    const LddHost::Facts& facts = files.host().facts();
    std::string env = facts.auditwheel_ld_library_path;
    if (!facts.ld_library_path.empty()) env += (env.empty() ? "" : ":") + facts.ld_library_path;
    w.paths.env = parse_ld_paths(files, env, "", "");
    w.paths.conf = files.host().conf_dirs(e.libc);
  }
  if (e.interp) {
    std::string interp = lddtree_normpath("/" + *e.interp), soname = path_basename(interp);
    t.libraries[soname] = DynamicLibrary{soname, interp, files.follow_links(interp), nullptr, {}};
    std::string dir = path_dirname(*e.interp);
    w.paths.interp = {lddtree_normpath("/" + dir), lddtree_normpath("/usr" + dir)};
  }
  std::tie(w.top_rpath, w.top_runpath) = own_paths(files, e, path);
  resolve_needed(w, e, path);
  return t;
}

}  // namespace envdoctor::python
