// A container's root file system read from this machine (--root DIR). Paths stay the
// container's own ("/opt/venv/bin/python"), and every file access goes to host(path): the path
// below the root, with symbolic links followed inside the root as a chroot would (an absolute
// link target restarts at the root). An empty root is this machine's own file system, where
// host(path) is path. This is the one place that maps between the two spellings.
#pragma once

#include <string>

namespace envdoctor::support {

class FileRoot {
 public:
  FileRoot() = default;
  // `dir` as given on the command line: made absolute and normal, without a trailing slash;
  // "/" is this machine's own file system.
  explicit FileRoot(const std::string& dir);

  bool empty() const { return root_.empty(); }
  const std::string& dir() const { return root_; }

  // In-root path -> host path, every link resolved inside the root (at most 40, as Linux).
  std::string host(const std::string& path) const;
  // Like host() but the last component is not followed: what lstat(2) of `path` looks at.
  std::string host_no_follow(const std::string& path) const;
  // The in-root path of a host path below the root ("" when it lies outside).
  std::string strip(const std::string& host_path) const;
  // The path with every link resolved inside the root, still in-root.
  std::string canonical(const std::string& path) const { return empty() ? path : strip(host(path)); }
  // A path the user gave: one on this machine below the root is taken as the path inside it (as
  // `ldd --root` takes its files); anything else is already the container's own.
  std::string inside(const std::string& path) const;

 private:
  std::string root_;
};

}  // namespace envdoctor::support
