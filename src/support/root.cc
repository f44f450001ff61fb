#include "support/root.h"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <vector>

namespace envdoctor::support {

namespace {

// Resolves `path` inside `root` component by component, following symbolic links as a process
// chrooted to `root` would (absolute targets restart at `root`). At most 40 links, like Linux.
std::string resolve_in_root(const std::string& root, const std::string& path) {
  std::vector<std::string> parts;
  std::string pending = path;
  int links = 0;
  std::string resolved;  // inside root, always starting with '/'
  while (true) {
    size_t pos = 0;
    bool restarted = false;
    while (pos <= pending.size()) {
      size_t next = pending.find('/', pos);
      if (next == std::string::npos) next = pending.size();
      std::string comp = pending.substr(pos, next - pos);
      std::string rest = next < pending.size() ? pending.substr(next + 1) : "";
      pos = next + 1;
      if (comp.empty() || comp == ".") {
        if (next == pending.size()) break;
        continue;
      }
      if (comp == "..") {
        size_t slash = resolved.rfind('/');
        resolved.resize(slash == std::string::npos ? 0 : slash);
        if (next == pending.size()) break;
        continue;
      }
      std::string candidate = resolved + "/" + comp;
      char buf[PATH_MAX];
      ssize_t n = ::readlink((root + candidate).c_str(), buf, sizeof buf - 1);
      if (n > 0 && ++links <= 40) {
        std::string target(buf, static_cast<size_t>(n));
        if (!target.empty() && target[0] == '/') resolved.clear();
        pending = target + (rest.empty() ? "" : "/" + rest);
        restarted = true;
        break;
      }
      resolved = candidate;
      if (next == pending.size()) break;
    }
    if (!restarted) break;
  }
  return root + (resolved.empty() ? "/" : resolved);
}

}  // namespace

FileRoot::FileRoot(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  root_ = std::filesystem::absolute(dir, ec).lexically_normal().string();
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string FileRoot::host(const std::string& path) const {
  if (empty() || path.empty() || path[0] != '/') return path;
  return resolve_in_root(root_, path);
}

std::string FileRoot::host_no_follow(const std::string& path) const {
  size_t slash = path.rfind('/');
  if (empty() || slash == std::string::npos || slash + 1 == path.size()) return host(path);
  std::string dir = host(slash == 0 ? "/" : path.substr(0, slash));
  return (dir.back() == '/' ? dir : dir + "/") + path.substr(slash + 1);
}

std::string FileRoot::strip(const std::string& host_path) const {
  if (empty()) return host_path;
  if (host_path == root_) return "/";
  if (host_path.size() > root_.size() && host_path.compare(0, root_.size(), root_) == 0 &&
      host_path[root_.size()] == '/')
    return host_path.substr(root_.size());
  return "";
}

std::string FileRoot::inside(const std::string& path) const {
  if (empty()) return path;
  std::error_code ec;
  std::string in = strip(std::filesystem::absolute(path, ec).lexically_normal().string());
  return in.empty() ? path : in;
}

}  // namespace envdoctor::support
