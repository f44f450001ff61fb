// Debian's package database (/var/lib/dpkg): who owns a file (info/*.list), at which version
// (status), which files a package installed with their MD5 sums (info/PKG.md5sums), and where
// another package moved one of them (diversions). It is read on first need and only once: the
// file lists on the first question about an owner, a package's md5sums when that package is
// checked. A library the loader resolves from /usr/lib is then named by its package
// ("libstdc++6 12.2.0-14"), a file under dist-packages by the Debian package that installed it
// ("python3-torch"), and a Debian-managed distribution is judged by dpkg's records rather than
// by the upstream RECORD that Debian's build leaves behind. Safe to query from several threads.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/types.h"

namespace envdoctor::python {

struct DpkgPackage {
  std::string name;     // "libstdc++6" (the architecture qualifier dropped)
  std::string version;  // "12.2.0-14"; "" when status does not say
};

// One line of PKG.md5sums: a file as dpkg installed it.
struct DpkgFile {
  std::string path;  // absolute, where the file is now (a diversion by another package applied)
  std::string md5;   // 32 lowercase hex digits
};

class DpkgIndex {
 public:
  // `root`: read ROOT/var/lib/dpkg (a container's); paths asked are the root's own.
  explicit DpkgIndex(std::string root = "") : root_(std::move(root)) {}

  // The package whose file list holds `path` (as spelled, or with its directory's symbolic links
  // resolved: /lib is /usr/lib on a merged system); nullopt when none or no dpkg database.
  std::optional<DpkgPackage> owner(const std::string& path) const;

  // Every file of every package's list named `name` (its last component), with its package, in
  // the lists' order: who ships a library the loader does not find. A scan of every line; for hints.
  std::vector<std::pair<std::string, DpkgPackage>> files_named(std::string_view name) const;

  // The files `package` installed, from its md5sums, in the file's order; empty when it has none.
  std::vector<DpkgFile> files(const std::string& package) const;

  // Whether the database has been read (for tests of "read once, only when needed").
  bool loaded() const;

  // Reads the database now, if it has not been read: for a thread that has nothing else to do
  // while the interpreter answers its probe. Questions asked meanwhile wait for it.
  void prefetch() const;

 private:
  void load() const;                                    // holds mu_
  void load_diversions() const;                         // holds mu_
  std::optional<DpkgPackage> package(u32 index) const;  // holds mu_

  std::string root_;
  mutable std::mutex mu_;
  mutable bool loaded_ = false;
  mutable std::vector<std::string> packages_;    // names
  mutable std::vector<std::string> info_stems_;  // "libstdc++6:amd64": info/<stem>.md5sums
  // Every line of every info/*.list, as a view into the list (kept whole; a deque does not move
  // its strings), with its package, in the order read: a flat open-addressing table over 170,000
  // paths costs a sixth of a node-based map to build.
  struct Line {
    std::string_view path;
    size_t hash;
    u32 package;
  };
  mutable std::deque<std::string> lists_;
  mutable std::vector<Line> lines_;
  mutable std::vector<u32> slots_;  // indices into lines_, kEmpty where none; at most half full
  static constexpr u32 kEmpty = ~0u;
  void index_lines() const;                                    // holds mu_
  std::optional<u32> package_of(std::string_view path) const;  // holds mu_
  mutable std::unordered_map<std::string, std::string> versions_;
  // files_named's answers by name: a missing library's hint asks for every failure, and the
  // failures of one environment name a few libraries many times (34 questions, 19 names, for the
  // torch venv), each a scan of every line.
  mutable std::unordered_map<std::string, std::vector<std::pair<std::string, DpkgPackage>>> named_;
  // dpkg-divert: the path a package's file was moved to, and the package that moved it.
  mutable std::unordered_map<std::string, std::pair<std::string, std::string>> diversions_;
};

}  // namespace envdoctor::python
