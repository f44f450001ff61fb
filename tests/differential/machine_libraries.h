// The files the differential tests walk: every regular ELF file named *.so* under this machine's
// library directories (/usr/lib/x86_64-linux-gnu and, when present, /usr/local/cuda/lib64, or the
// ':'-separated ENVDOCTOR_DIFFERENTIAL_DIRS), and a snapshot of them and of the loader's
// configuration, so that a test can tell a disagreement of the model from a machine that changed
// under it (apt installing, removing or upgrading packages while the test runs).
//
// The set of files differs from machine to machine; the verdict must not: every file is compared
// or counted as skipped for a stated reason, whatever packages are installed.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/fixture.h"

namespace envdoctor::test {

inline std::vector<std::string> differential_directories() {
  if (const char* env = std::getenv("ENVDOCTOR_DIFFERENTIAL_DIRS")) {
    std::vector<std::string> out;
    std::istringstream in(env);
    for (std::string d; std::getline(in, d, ':');)
      if (!d.empty()) out.push_back(d);
    return out;
  }
  return {"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"};
}

inline bool is_elf(const fs::path& p) {
  char magic[4] = {};
  std::ifstream in(p, std::ios::binary);
  return in.read(magic, 4) && std::string(magic, 4) ==
                                  "\x7f"
                                  "ELF";
}

// Calls `visit` with every entry below `dir` (none when it is not a directory), skipping what
// cannot be read. An error (a directory that vanishes while the walk runs) ends the walk; it
// shows as a change between two LibrarySnapshots.
template <typename Visit>
void walk(const std::string& dir, Visit visit) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    visit(*it);
  }
}

// Regular files (not symbolic links) named *.so* under `dirs` that start with the ELF magic,
// sorted; the others (linker scripts such as libc.so, archives) are counted in `not_elf`.
inline std::vector<std::string> shared_objects(const std::vector<std::string>& dirs, size_t* not_elf = nullptr) {
  std::vector<std::string> out;
  for (const std::string& dir : dirs)
    walk(dir, [&](const fs::directory_entry& e) {
      std::error_code ec;
      if (!e.is_regular_file(ec) || e.is_symlink(ec)) return;
      if (e.path().filename().string().find(".so") == std::string::npos) return;
      if (is_elf(e.path())) out.push_back(e.path().string());
      else if (not_elf) ++*not_elf;
    });
  std::sort(out.begin(), out.end());
  return out;
}

// What the loader could see of the machine: every entry (file, link, directory) under `dirs`, and
// the files of ld.so's configuration, each with its inode, size and modification time (lstat).
// Two snapshots that differ mean that packages changed while a test ran.
class LibrarySnapshot {
 public:
  static LibrarySnapshot take(const std::vector<std::string>& dirs) {
    LibrarySnapshot s;
    for (const char* f : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.preload"}) s.add(f);
    std::vector<std::string> roots = dirs;
    roots.push_back("/etc/ld.so.conf.d");
    for (const std::string& dir : roots) walk(dir, [&](const fs::directory_entry& e) { s.add(e.path().string()); });
    return s;
  }

  // The paths added, removed or changed between `before` and `after`, sorted.
  static std::vector<std::string> changes(const LibrarySnapshot& before, const LibrarySnapshot& after) {
    std::vector<std::string> out;
    for (const auto& [path, id] : before.entries_) {
      auto it = after.entries_.find(path);
      if (it == after.entries_.end() || it->second != id) out.push_back(path);
    }
    for (const auto& [path, id] : after.entries_)
      if (!before.entries_.count(path)) out.push_back(path);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  using Identity = std::tuple<ino_t, off_t, time_t, long>;
  void add(const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) == 0) entries_[path] = {st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  }
  std::map<std::string, Identity> entries_;
};

// For a test's failure message: at most `max` of `paths`, one per line.
inline std::string first_paths(const std::vector<std::string>& paths, size_t max = 10) {
  std::string out;
  for (size_t i = 0; i < paths.size() && i < max; ++i) out += "  " + paths[i] + "\n";
  if (paths.size() > max) out += "  (and " + std::to_string(paths.size() - max) + " more)\n";
  return out;
}

}  // namespace envdoctor::test
