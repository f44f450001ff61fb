#include "loader/ldconfig.h"

#include <dirent.h>
#include <elf.h>
#include <glob.h>
#include <sys/stat.h>

#include <fnmatch.h>
#include <strings.h>
#include <algorithm>
#include <bit>
#include <cctype>
#include <deque>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace envdoctor::loader {

namespace {

constexpr i64 kFlagElf = 0x0001;         // FLAG_ELF
constexpr i64 kFlagElfLibc5 = 0x0002;    // FLAG_ELF_LIBC5
constexpr i64 kFlagElfLibc6 = 0x0003;    // FLAG_ELF_LIBC6
constexpr i64 kFlagLibc4 = 0x0000;       // FLAG_LIBC4
constexpr i64 kFlagAny = -1;             // FLAG_ANY
constexpr i64 kFlagX8664Lib64 = 0x0300;  // FLAG_X8664_LIB64
constexpr i64 kFlagX8664Libx32 = 0x0800;

// One directory of ldconfig's list (struct dir_entry).
struct Dir {
  std::string path;  // as spelled where it was added
  i64 flag = kFlagAny;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string hwcaps;  // the glibc-hwcaps subdirectory's name, "" for any other directory
};

class Ldconfig {
 public:
  Ldconfig(const support::FileRoot& root, ObjectStore& store, const std::map<std::string, std::string>& added)
      : root_(root), store_(store), added_(added) {}

  void add_dir_1(std::string line);
  void parse_conf(const std::string& file);
  LdconfigResult search_dirs();

 private:
  bool add_single_dir(Dir dir);
  void add_glibc_hwcaps_subdirectories(const Dir& dir);
  // One library of a directory, as search_dir keeps it (struct dlib_entry).
  struct Dlib {
    std::string name, soname;
    i64 flag = 0;
    unsigned isa_level = 0;
    bool is_link = false;
  };
  void search_dir(const Dir& dir, LdconfigResult& out);
  // The cache entries and links of one directory's libraries.
  static void file_libraries(const Dir& dir, const std::string& host_dir, const std::vector<Dlib>& dlibs,
                             LdconfigResult& out);
  void parse_conf_include(const std::string& config_file, const std::string& pattern);
  // The flag word and SONAME ldconfig gives the file (process_file); nullopt when it skips it.
  struct Library {
    i64 flag = 0;
    unsigned isa_level = 0;
    std::optional<std::string> soname;
  };
  std::optional<Library> process_file(const std::string& path);

  const support::FileRoot& root_;
  ObjectStore& store_;
  const std::map<std::string, std::string>& added_;
  std::vector<Dir> dirs_;
  std::set<std::string> reading_;  // configuration files being read, outermost first
};

// sysdeps/x86/dl-hwcap.h and dl-procinfo.c, x86-64: the hwcap strings x86_64 (bit 1) and
// avx512_1 (bit 2), both in HWCAP_IMPORTANT; the platforms haswell and xeon_phi (bits 50, 51);
// TLS_HWCAP_BIT 63 for "tls".
std::optional<int> hwcap_bit(std::string_view name) {
  if (name == "x86_64") return 1;
  if (name == "avx512_1") return 2;
  if (name == "haswell") return 48 + 2;
  if (name == "xeon_phi") return 48 + 3;
  if (name == "tls") return 63;
  return std::nullopt;
}

bool is_hwcap_platform(std::string_view name) { return hwcap_bit(name).has_value(); }

// path_hwcap: the bits of the hwcap names that end the path, read from its end.
u64 path_hwcap(std::string_view path) {
  u64 hwcap = 0;
  while (true) {
    size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) break;
    std::optional<int> bit = hwcap_bit(path.substr(slash + 1));
    if (!bit) break;
    hwcap += u64{1} << *bit;
    path = path.substr(0, slash);
  }
  return hwcap;
}

// elf/dl-is_dso.h
bool is_dso(std::string_view name) {
  return ((name.starts_with("lib") || name.starts_with("ld-")) && name.find(".so") != std::string_view::npos) ||
         name.starts_with("ld.so.") || name.starts_with("ld64.so.");
}

bool is_prelink_temporary(std::string_view name) {
  if (name.ends_with(".#prelink#")) return true;
  constexpr std::string_view stem = ".#prelink#.";
  return name.size() >= stem.size() + 6 && name.substr(name.size() - stem.size() - 6, stem.size()) == stem;
}

std::string trim_trailing(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

int cache_libcmp(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size()) {
    if (digit(a[i])) {
      if (j >= b.size() || !digit(b[j])) return 1;
      long long va = 0, vb = 0;
      while (i < a.size() && digit(a[i])) va = va * 10 + (a[i++] - '0');
      while (j < b.size() && digit(b[j])) vb = vb * 10 + (b[j++] - '0');
      if (va != vb) return va < vb ? -1 : 1;
    } else if (j < b.size() && digit(b[j])) {
      return -1;
    } else if (j >= b.size() || a[i] != b[j]) {
      // *p1 - *p2 on x86's signed char.
      return static_cast<signed char>(a[i]) - (j < b.size() ? static_cast<signed char>(b[j]) : 0);
    } else {
      ++i;
      ++j;
    }
  }
  return j < b.size() ? -static_cast<signed char>(b[j]) : 0;
}

namespace {

bool Ldconfig::add_single_dir(Dir dir) {
  for (Dir& d : dirs_)
    if (d.dev == dir.dev && d.ino == dir.ino) {
      d.flag = dir.flag;  // "Use the newer information."
      return false;
    }
  dirs_.push_back(std::move(dir));
  return true;
}

void Ldconfig::add_glibc_hwcaps_subdirectories(const Dir& dir) {
  std::string hwcaps_dir = root_.host(dir.path + "/glibc-hwcaps");
  DIR* d = ::opendir(hwcaps_dir.c_str());
  if (!d) return;
  std::vector<Dir> found;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    // Hidden entries, regular files and names with ':' are not looked up by ld.so.
    if (name.starts_with('.') || e->d_type == DT_REG || name.find(':') != std::string_view::npos) continue;
    struct stat st;
    std::string path = dir.path + "/glibc-hwcaps/" + std::string(name);
    if (::stat(root_.host(path).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    found.push_back(Dir{path, dir.flag, st.st_dev, st.st_ino, std::string(name)});
  }
  ::closedir(d);
  for (Dir& sub : found) add_single_dir(std::move(sub));
}

void Ldconfig::add_dir_1(std::string line) {
  Dir dir;
  if (size_t eq = line.find('='); eq != std::string::npos) {
    std::string type = line.substr(eq + 1);
    line.resize(eq);
    if (type == "libc4") dir.flag = kFlagLibc4;
    if (type == "libc5") dir.flag = kFlagElfLibc5;
    if (type == "libc6" || type == "glibc2") dir.flag = kFlagElfLibc6;
  }
  dir.path = trim_trailing(std::move(line));
  if (dir.path.empty()) return;
  struct stat st;
  if (::stat(root_.host(dir.path).c_str(), &st) != 0) return;  // "Can't stat": skipped
  dir.dev = st.st_dev;
  dir.ino = st.st_ino;
  Dir copy = dir;
  if (add_single_dir(std::move(dir))) add_glibc_hwcaps_subdirectories(copy);
}

void Ldconfig::parse_conf_include(const std::string& config_file, const std::string& pattern) {
  std::string full = pattern;
  if (!pattern.starts_with('/') && config_file.find('/') != std::string::npos)
    full = dir_of(config_file) + "/" + pattern;
  if (!full.starts_with('/')) return;  // ldconfig -r refuses a relative include
  // The glob runs on the host path of the pattern's directory; the files it names are read as
  // the root's.
  std::string host_pattern = root_.host(dir_of(full)) + full.substr(full.rfind('/'));
  std::set<std::string> files;  // glob's order: sorted, LC_COLLATE=C
  glob_t gl;
  if (::glob(host_pattern.c_str(), 0, nullptr, &gl) == 0) {
    for (size_t i = 0; i < gl.gl_pathc; ++i) {
      std::string inside = root_.strip(gl.gl_pathv[i]);
      files.insert(inside.empty() ? gl.gl_pathv[i] : inside);
    }
  }
  ::globfree(&gl);
  for (const auto& [path, text] : added_)
    if (::fnmatch(full.c_str(), path.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) files.insert(path);
  for (const std::string& f : files) parse_conf(f);
}

void Ldconfig::parse_conf(const std::string& file) {
  // A file that includes itself, directly or through others, recurses in ldconfig until its stack
  // runs out; here the inner reading is skipped.
  if (!reading_.insert(file).second) return;
  struct Done {
    std::set<std::string>& reading;
    const std::string& file;
    ~Done() { reading.erase(file); }
  } done{reading_, file};
  std::stringstream text;
  if (auto it = added_.find(file); it != added_.end()) {
    text << it->second;
  } else {
    std::ifstream in(root_.host(file), std::ios::binary);
    if (!in) return;
    text << in.rdbuf();
  }
  std::string line;
  while (std::getline(text, line)) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    size_t start = 0;
    while (start < line.size() && std::isspace(static_cast<unsigned char>(line[start]))) ++start;
    std::string_view cp = std::string_view(line).substr(start);
    if (cp.empty()) continue;
    auto blank_at = [&](size_t i) { return cp.size() > i && (cp[i] == ' ' || cp[i] == '\t'); };
    if (cp.starts_with("include") && blank_at(7)) {
      std::string_view rest = cp.substr(8);
      while (!rest.empty()) {
        size_t end = rest.find_first_of(" \t");
        std::string_view word = rest.substr(0, end);
        if (!word.empty()) parse_conf_include(file, std::string(word));
        if (end == std::string_view::npos) break;
        rest = rest.substr(end + 1);
      }
    } else if (cp.size() > 5 && strncasecmp(cp.data(), "hwcap", 5) == 0 && blank_at(5)) {
      continue;  // "hwcap directive ignored"
    } else {
      add_dir_1(std::string(cp));
    }
  }
}

std::optional<Ldconfig::Library> Ldconfig::process_file(const std::string& path) {
  std::shared_ptr<const OpenResult> op = store_.open(path);
  if (!op->elf) return std::nullopt;  // not ELF, too short, or a header the loader refuses
  const elf::ElfFile& elf = *op->elf;
  if (elf.type != ET_DYN || !elf.has_dynamic) return std::nullopt;
  Library lib;
  if (elf.machine == EM_X86_64) {
    // "X86-64 64bit libraries are always libc.so.6+", x32 likewise.
    lib.flag = (elf.is_64() ? kFlagX8664Lib64 : kFlagX8664Libx32) | kFlagElfLibc6;
  } else if (elf.machine == EM_386 && !elf.is_64()) {
    lib.flag = kFlagElf;
    if (elf.interp && (*elf.interp == "/lib/ld-linux-x86-64.so.2" || *elf.interp == "/lib/ld-linux.so.2" ||
                       *elf.interp == "/libx32/ld-linux-x32.so.2" || *elf.interp == "/lib64/ld-linux-x86-64.so.2"))
      lib.flag = kFlagElfLibc6;
    for (std::string_view n : elf.needed)
      if (lib.flag == kFlagElf && (n == "libc.so.6" || n == "libm.so.6")) lib.flag = kFlagElfLibc6;
  } else {
    return std::nullopt;  // "is for unknown machine"
  }
  if (elf.soname) lib.soname = std::string(*elf.soname);
  if (elf.x86_isa_needed && *elf.x86_isa_needed != 0) {
    unsigned level = 0;
    for (unsigned v = *elf.x86_isa_needed; v >>= 1;) ++level;  // bsr
    lib.isa_level = level;
  }
  return lib;
}

void Ldconfig::search_dir(const Dir& dir, LdconfigResult& out) {
  std::string host_dir = root_.host(dir.path);
  DIR* d = ::opendir(host_dir.c_str());
  if (!d) return;
  std::vector<Dlib> dlibs;
  std::vector<Dir> subdirs;
  while (struct dirent* e = ::readdir(d)) {
    unsigned char type = e->d_type;
    if (type != DT_UNKNOWN && type != DT_LNK && type != DT_REG && type != DT_DIR) continue;
    std::string name = e->d_name;
    if (!is_dso(name) && (type == DT_REG || !dir.hwcaps.empty() || !is_hwcap_platform(name))) continue;
    if (is_prelink_temporary(name)) continue;
    std::string file = dir.path + "/" + name;
    struct stat lst;
    if (::lstat((host_dir + "/" + name).c_str(), &lst) != 0) continue;
    bool is_link = S_ISLNK(lst.st_mode);
    struct stat st = lst;
    if (is_link && ::stat(root_.host(file).c_str(), &st) != 0) continue;  // a stale link: skipped
    bool is_dir = S_ISDIR(st.st_mode);
    if (dir.hwcaps.empty() && is_dir && is_hwcap_platform(name)) {
      subdirs.push_back(Dir{file, dir.flag, st.st_dev, st.st_ino, ""});
      continue;
    }
    if (!S_ISREG(lst.st_mode) && !is_link) continue;
    if (is_link && !S_ISREG(st.st_mode)) continue;  // mmap of what is not a file fails
    std::optional<Library> lib = process_file(file);
    if (!lib) continue;
    std::string soname = lib->soname.value_or(name);
    if (is_link && soname != name) {
      // A link counts as one only when its own name is the SONAME or the SONAME's ".so" stem.
      if (!(name.size() >= 3 && name.ends_with(".so") && soname.compare(0, name.size(), name) == 0)) is_link = false;
    }
    if (is_link) soname = name;
    if (lib->flag == kFlagElf && (dir.flag == kFlagElfLibc5 || dir.flag == kFlagElfLibc6)) lib->flag = dir.flag;
    Dlib candidate{name, soname, lib->flag, lib->isa_level, is_link};
    bool known = false;
    for (Dlib& have : dlibs) {
      if (have.soname != soname) continue;
      known = true;
      if ((!is_link && have.is_link) || (is_link == have.is_link && cache_libcmp(have.name, name) < 0)) {
        if (have.flag == kFlagElf && (lib->flag == kFlagElfLibc5 || lib->flag == kFlagElfLibc6)) have.flag = lib->flag;
        else if ((have.flag == kFlagElfLibc5 || have.flag == kFlagElfLibc6) && lib->flag == kFlagElf)
          have.flag = lib->flag;
        have.name = name;
        have.is_link = is_link;
        have.isa_level = lib->isa_level;
      }
      break;
    }
    if (!known) dlibs.insert(dlibs.begin(), std::move(candidate));  // "Add at head of list."
  }
  ::closedir(d);
  for (Dir& sub : subdirs) add_single_dir(std::move(sub));
  file_libraries(dir, host_dir, dlibs, out);
}

void Ldconfig::file_libraries(const Dir& dir, const std::string& host_dir, const std::vector<Dlib>& dlibs,
                              LdconfigResult& out) {
  u64 hwcap = dir.hwcaps.empty() ? path_hwcap(dir.path) : 0;
  for (const Dlib& lib : dlibs) {
    LdconfigEntry entry{lib.soname, "", lib.flag, hwcap, dir.hwcaps};
    if (dir.hwcaps.empty()) {
      entry.path = dir.path + "/" + lib.soname;
      if (!lib.is_link && lib.name != lib.soname) {
        // create_links: DIR/SONAME made a link to the file unless it already names it or is not
        // a link.
        std::string so = host_dir + "/" + lib.soname, real = host_dir + "/" + lib.name;
        struct stat s_so, s_lib, l_so;
        bool names_it = ::stat(so.c_str(), &s_so) == 0 && ::stat(real.c_str(), &s_lib) == 0 &&
                        s_so.st_dev == s_lib.st_dev && s_so.st_ino == s_lib.st_ino;
        bool other_file = ::lstat(so.c_str(), &l_so) == 0 && !S_ISLNK(l_so.st_mode);
        if (!names_it && !other_file) out.links.push_back({entry.path, lib.name});
      }
    } else {
      entry.path = dir.path + "/" + lib.name;
      // compute_hwcap_value: DL_CACHE_HWCAP_EXTENSION, the ISA level, the subdirectory's index
      // (the reader keeps the name; the index is the writer's).
      entry.hwcap = static_cast<u64>(lib.isa_level) << 32;
    }
    out.entries.push_back(std::move(entry));
  }
}

// cache.c's compare(): > 0 when `a` sorts after `b`.
int compare(const LdconfigEntry& a, const LdconfigEntry& b) {
  int res = cache_libcmp(b.soname, a.soname);
  if (res != 0) return res;
  if (a.flags != b.flags) return a.flags < b.flags ? 1 : -1;
  if (!a.hwcaps_subdir.empty() != !b.hwcaps_subdir.empty()) return a.hwcaps_subdir.empty() ? 1 : -1;
  if (!a.hwcaps_subdir.empty()) {
    if (int c = a.hwcaps_subdir.compare(b.hwcaps_subdir)) return c;
  }
  auto bits = [](u64 h) { return std::popcount(h); };
  u64 ha = a.hwcaps_subdir.empty() ? a.hwcap : 0, hb = b.hwcaps_subdir.empty() ? b.hwcap : 0;
  if (bits(hb) != bits(ha)) return bits(hb) > bits(ha) ? 1 : -1;
  if (hb != ha) return hb > ha ? 1 : -1;
  return 0;
}

LdconfigResult Ldconfig::search_dirs() {
  LdconfigResult out;
  for (size_t i = 0; i < dirs_.size(); ++i) {  // search_dir appends subdirectories
    Dir dir = dirs_[i];
    out.dirs.push_back(dir.path);
    search_dir(dir, out);
  }
  // add_to_cache inserts each entry after every entry that does not sort after it: a stable sort.
  std::stable_sort(out.entries.begin(), out.entries.end(),
                   [](const LdconfigEntry& a, const LdconfigEntry& b) { return compare(a, b) < 0; });
  return out;
}

}  // namespace

LdconfigResult run_ldconfig(const support::FileRoot& root, ObjectStore& store, const LdconfigOptions& options) {
  Ldconfig ldconfig(root, store, options.added_files);
  for (const std::string& dir : options.command_line) ldconfig.add_dir_1(dir);
  ldconfig.parse_conf(options.config_file);
  for (const std::string& dir : options.system_dirs) ldconfig.add_dir_1(dir);
  return ldconfig.search_dirs();
}

std::shared_ptr<const LdCache> cache_of(const LdconfigResult& result) {
  auto strings = std::make_shared<std::deque<std::string>>();
  std::vector<LdCacheEntry> entries;
  for (const LdconfigEntry& e : result.entries) {
    LdCacheEntry entry;
    entry.flags = e.flags;
    entry.key = strings->emplace_back(e.soname);
    entry.value = strings->emplace_back(e.path);
    entry.hwcap = e.hwcap;
    if (!e.hwcaps_subdir.empty()) entry.hwcaps_subdir = std::string_view(strings->emplace_back(e.hwcaps_subdir));
    entries.push_back(entry);
  }
  return LdCache::from_entries(std::move(entries), std::move(strings));
}

}  // namespace envdoctor::loader
