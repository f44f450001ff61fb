// The ELF index's walk (environment.h, find_elf_files): every file under sys.path that starts with
// the ELF magic or is named as an extension module, each directory read once with getdents64 and
// an entry's type taken from d_type, several directories at a time.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "elf/elf_types.h"
#include "environment/environment.h"
#include "python/extension_module.h"
#include "support/parallel.h"

namespace envdoctor::environment {

namespace fs = std::filesystem;

bool has_elf_magic(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  unsigned char magic[4];
  bool ok = ::read(fd, magic, 4) == 4 && std::memcmp(magic,
                                                     "\x7f"
                                                     "ELF",
                                                     4) == 0;
  ::close(fd);
  return ok;
}

// importlib.machinery.EXTENSION_SUFFIXES on Linux CPython ends with the bare ".so", which
// covers the others (".cpython-311-x86_64-linux-gnu.so", ".abi3.so"): any "<identifier>.<...>so"
// is a name `import <identifier>` opens with dlopen, whatever the file holds.
bool named_as_extension_module(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (!name.ends_with(".so")) return false;
  return python::is_module_name(name.substr(0, name.find('.')));
}

namespace {

// Names that a program file never has: Python's own sources and bytecode, the C sources and
// headers wheels ship, and the text and data files beside them (a wheel's files mostly). A file
// so named is not asked whether it is executable, which saves a system call for nearly every
// file of an environment; an ELF program named `tool.py` would go unseen.
bool named_as_non_program(std::string_view name) {
  static constexpr std::string_view kSuffixes[] = {".py",  ".pyc", ".pyi", ".pyx",  ".pxd", ".txt",  ".json", ".h",
                                                   ".hpp", ".c",   ".cc",  ".cpp",  ".md",  ".rst",  ".html", ".js",
                                                   ".css", ".csv", ".pem", ".toml", ".cfg", ".ini",  ".yaml", ".yml",
                                                   ".xml", ".svg", ".png", ".mo",   ".po",  ".typed"};
  return std::any_of(std::begin(kSuffixes), std::end(kSuffixes),
                     [&](std::string_view suffix) { return name.ends_with(suffix); });
}

// One directory walk: each directory read with getdents64, whose d_type says what an entry is
// without a system call of its own; only an entry of unknown type, and a regular file that is
// not named *.so* but may be a program (its permissions decide), is asked with fstatat. Links
// are names, not files: the loader model follows them when it resolves; a link to a directory
// is not followed (as std::filesystem's recursive walk does not). Directories are read several
// at a time (support::parallel_work_list): with a cold cache each is a wait on the disk, and a
// large environment has ten thousand of them.
class ElfWalk {
 public:
  struct Candidate {
    std::string path;  // as the environment spells it (in-root under --root)
    std::string host;  // where this machine reads it
    bool operator<(const Candidate& o) const { return path < o.path; }
    bool operator==(const Candidate& o) const { return path == o.path; }
  };

  ElfWalk(const std::set<std::string>& roots, const std::set<std::string>& import_only, bool list)
      : roots_(roots), import_only_(import_only), list_(list) {}

  // Walks each directory of `dirs`, spelt as the environment spells it, read from where `root`
  // puts it. Under a root the walk starts at the directory resolved inside it; below that, links
  // are not followed, so nothing leads out of the root. Returns the candidates, unsorted.
  std::vector<Candidate> walk(const std::vector<std::string>& dirs, const support::FileRoot& root, Listing* listing) {
    root_ = &root;
    std::vector<Dir> starts;
    for (const std::string& dir : dirs) starts.push_back({dir, root.host(dir), &dir, true});
    size_t threads = support::io_bound_threads(starts.empty() ? 0 : SIZE_MAX);
    std::vector<Seen> seen(threads);
    support::parallel_work_list(std::move(starts), threads, [&](Dir dir, size_t worker, std::vector<Dir>& more) {
      read_directory(dir, seen[worker], more);
    });
    std::vector<Candidate> out;
    for (Seen& s : seen) {
      out.insert(out.end(), std::make_move_iterator(s.candidates.begin()), std::make_move_iterator(s.candidates.end()));
      if (!listing) continue;
      listing->dirs.merge(s.listing.dirs);
      listing->entries.merge(s.listing.entries);
    }
    return out;
  }

 private:
  struct Dir {
    std::string path;          // as the environment spells it
    std::string host;          // where this machine reads it
    const std::string* start;  // the directory of sys.path it lies in
    bool follow = false;       // a start, opened through links
  };
  struct Seen {  // one worker's findings
    std::vector<Candidate> candidates;
    Listing listing;
  };

  // Reads one directory and puts the subdirectories to descend into in `more`.
  void read_directory(const Dir& dir, Seen& seen, std::vector<Dir>& more) const {
    int fd = ::open(dir.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (dir.follow ? 0 : O_NOFOLLOW));
    if (fd < 0) return;
    alignas(8) char buf[32768];
    ssize_t n;
    while ((n = ::getdents64(fd, buf, sizeof buf)) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
        at += d->d_reclen;
        std::string_view name = d->d_name;
        if (name == "." || name == "..") continue;
        unsigned char type = d->d_type;
        mode_t mode = 0;
        bool asked = false;
        if (type == DT_UNKNOWN) {
          if (!stat_at(fd, name, mode)) continue;
          type = S_ISDIR(mode) ? DT_DIR : S_ISREG(mode) ? DT_REG : DT_LNK;
          asked = true;
        }
        std::string path = dir.path + "/" + std::string(name);
        if (list_) seen.listing.entries.emplace(path, listed_type(type));
        if (type == DT_DIR) {
          if (descend(name, path, *dir.start)) more.push_back({path, dir.host + "/" + std::string(name), dir.start});
        } else if (type == DT_REG) {
          consider_file(fd, dir, name, asked ? std::optional<mode_t>(mode) : std::nullopt, seen.candidates);
        } else if (type == DT_LNK && import_only_.count(*dir.start) != 0) {
          consider_link(dir, name, seen.candidates);
        }
      }
    }
    if (n == 0 && list_) seen.listing.dirs.insert(dir.path);
    ::close(fd);
  }

  static Listing::Type listed_type(unsigned char type) {
    switch (type) {
      case DT_REG: return Listing::Type::kFile;
      case DT_LNK: return Listing::Type::kLink;
      case DT_DIR: return Listing::Type::kDirectory;
      default: return Listing::Type::kOther;
    }
  }

  static bool stat_at(int fd, std::string_view name, mode_t& mode) {
    struct stat st;
    if (::fstatat(fd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
    mode = st.st_mode;
    return true;
  }

  // Another site directory is walked on its own, if it is on sys.path at all (a venv's base
  // interpreter keeps its site-packages inside the standard library directory). Below an editable
  // project's root, only packages: what import reaches (not setuptools' build/lib.* copies).
  bool descend(std::string_view name, const std::string& path, const std::string& start) const {
    if (import_only_.count(start) != 0 && !python::is_module_name(name)) return false;
    bool root = roots_.count(path) != 0;
    if (name == "__pycache__" || ((name == "site-packages" || name == "dist-packages") && !root)) return false;
    return !(root && path != start);
  }

  // A regular file may be loaded when it is named *.so* or is executable.
  static void consider_file(int fd, const Dir& dir, std::string_view name, std::optional<mode_t> mode,
                            std::vector<Candidate>& out) {
    if (name.find(".so") == std::string_view::npos) {
      if (!mode && named_as_non_program(name)) return;
      mode_t m = 0;
      if (mode) m = *mode;
      else if (!stat_at(fd, name, m) || !S_ISREG(m)) return;
      if ((m & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0) return;
    }
    out.push_back({dir.path + "/" + std::string(name), dir.host + "/" + std::string(name)});
  }

  // setuptools' strict editable mode links each file of the project into a tree on sys.path, and
  // import opens the link, whose directory is the module's $ORIGIN (glibc elf/dl-object.c takes
  // l_origin from the name opened, not its target): below an editable root, a link named as a
  // library or module to a regular file is a candidate, its target found inside the root.
  void consider_link(const Dir& dir, std::string_view name, std::vector<Candidate>& out) const {
    if (name.find(".so") == std::string_view::npos) return;
    std::string path = dir.path + "/" + std::string(name);
    std::string host = root_->host(path);
    struct stat st;
    if (::stat(host.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back({path, host});
  }

  const std::set<std::string>& roots_;
  const std::set<std::string>& import_only_;
  const support::FileRoot* root_ = nullptr;
  bool list_;
};

}  // namespace

std::vector<std::string> find_elf_files(const std::vector<std::string>& dirs, const support::FileRoot& root,
                                        Listing* listing, const std::set<std::string>& import_only) {
  std::set<std::string> roots(dirs.begin(), dirs.end());
  std::vector<ElfWalk::Candidate> candidates =
      ElfWalk(roots, import_only, listing != nullptr).walk(dirs, root, listing);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<char> is_elf(candidates.size(), 0);
  support::parallel_for(candidates.size(), [&](size_t i) { is_elf[i] = has_elf_magic(candidates[i].host); });
  std::vector<std::string> out;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (is_elf[i] || named_as_extension_module(candidates[i].path)) out.push_back(std::move(candidates[i].path));
  return out;
}

}  // namespace envdoctor::environment
