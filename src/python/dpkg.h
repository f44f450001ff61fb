// Who owns a system library: Debian's package database (/var/lib/dpkg/info/*.list for files,
// /var/lib/dpkg/status for versions), read on first need and only then. A library the loader
// resolves from /usr/lib can then be named by its package ("libstdc++6 12.2.0-14"), which is
// what an engineer installs or upgrades. Safe to query from several threads.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace envdoctor::python {

struct DpkgPackage {
  std::string name;     // "libstdc++6" (the architecture qualifier dropped)
  std::string version;  // "12.2.0-14"; "" when status does not say
};

class DpkgIndex {
 public:
  // `root`: read ROOT/var/lib/dpkg (a container's); paths asked are the root's own.
  explicit DpkgIndex(std::string root = "") : root_(std::move(root)) {}

  // The package whose file list holds `path` (as spelled, or with its directory's symbolic links
  // resolved: /lib is /usr/lib on a merged system); nullopt when none or no dpkg database.
  std::optional<DpkgPackage> owner(const std::string& path) const;

 private:
  void load() const;  // holds mu_

  std::string root_;
  mutable std::mutex mu_;
  mutable bool loaded_ = false;
  mutable std::unordered_map<std::string, std::string> file_to_package_;
  mutable std::unordered_map<std::string, std::string> versions_;
};

}  // namespace envdoctor::python
