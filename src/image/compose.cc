#include "image/compose.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/root.h"

namespace envdoctor::image {

namespace {

namespace fs = std::filesystem;

class Composer {
 public:
  Composer(const std::string& dir, std::vector<std::string>* problems) : root_(dir), problems_(problems) {}

  void apply(const Layer& layer) {
    // Whiteouts and opaque markers hide what the layers below put there, never the layer's own.
    for (const LayerEntry& e : layer.entries) {
      if (e.kind == LayerEntryKind::kWhiteout) remove(e.path);
      if (e.kind == LayerEntryKind::kOpaque) empty_directory(e.path);
    }
    for (const LayerEntry& e : layer.entries) {
      switch (e.kind) {
        case LayerEntryKind::kDirectory: directory(e); break;
        case LayerEntryKind::kFile: link_file(layer.file(e), e.path); break;
        case LayerEntryKind::kSymlink: symlink(e); break;
        case LayerEntryKind::kHardlink: hard_link(e); break;
        case LayerEntryKind::kWhiteout:
        case LayerEntryKind::kOpaque: break;
      }
    }
  }

 private:
  void problem(const std::string& path, const std::string& why) { problems_->push_back("/" + path + ": " + why); }

  // The host path of in-root `path`, its parent resolved inside the root; with `create`, missing
  // parent directories are made. "" when the parent is not a directory inside the root.
  std::string place(const std::string& path, bool create) {
    std::string host = root_.host_no_follow("/" + path);
    size_t slash = host.rfind('/');
    std::string parent = host.substr(0, slash);
    if (parent.size() < root_.dir().size()) return "";
    if (parent == verified_) return host;
    // Every component below the root must be a directory, not a link: resolving followed the
    // links, so one left here is a loop past Linux's 40, or a race; nothing is made through it.
    for (size_t pos = root_.dir().size(); pos < parent.size();) {
      size_t next = parent.find('/', pos + 1);
      if (next == std::string::npos) next = parent.size();
      std::string prefix = parent.substr(0, next);
      struct stat st;
      if (::lstat(prefix.c_str(), &st) != 0) {
        if (!create || ::mkdir(prefix.c_str(), 0755) != 0) return "";
      } else if (!S_ISDIR(st.st_mode)) {
        return "";
      }
      pos = next;
    }
    verified_ = parent;
    return host;
  }

  // Removes whatever is at `host` (a directory with all it holds); links are not followed.
  static void clear(const std::string& host) {
    std::error_code ec;
    fs::remove_all(host, ec);
  }

  void remove(const std::string& path) {
    std::string host = place(path, false);
    if (!host.empty()) clear(host);
    verified_.clear();
  }

  void empty_directory(const std::string& path) {
    std::string host = path.empty() ? root_.dir() : place(path, false);
    struct stat st;
    if (host.empty() || ::lstat(host.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
    std::error_code ec;
    for (const fs::directory_entry& child : fs::directory_iterator(host, ec)) clear(child.path().string());
    verified_.clear();
  }

  void directory(const LayerEntry& e) {
    std::string host = place(e.path, true);
    if (host.empty()) return problem(e.path, "left out, its parent is not a directory");
    struct stat st;
    if (::lstat(host.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) clear(host);
    if (::mkdir(host.c_str(), 0755) != 0 && errno != EEXIST) return problem(e.path, std::strerror(errno));
    // Always searchable and readable by its owner: the model walks it.
    ::chmod(host.c_str(), (e.mode & 0777) | 0700);
    verified_.clear();
  }

  // `host` made free for a new entry.
  void replace(const std::string& host) {
    struct stat st;
    if (::lstat(host.c_str(), &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
      clear(host);
      verified_.clear();
    } else {
      ::unlink(host.c_str());
    }
  }

  void link_file(const std::string& source, const std::string& path) {
    std::string host = place(path, true);
    if (host.empty()) return problem(path, "left out, its parent is not a directory");
    replace(host);
    if (::link(source.c_str(), host.c_str()) != 0) problem(path, std::strerror(errno));
  }

  void symlink(const LayerEntry& e) {
    std::string host = place(e.path, true);
    if (host.empty()) return problem(e.path, "left out, its parent is not a directory");
    replace(host);
    if (::symlink(e.link.c_str(), host.c_str()) != 0) problem(e.path, std::strerror(errno));
  }

  // A hard link names a file of this layer or of one below (OCI image spec, "Hardlinks").
  void hard_link(const LayerEntry& e) {
    std::string target = place(e.link, false);
    struct stat st;
    if (target.empty() || ::lstat(target.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
      return problem(e.path, "left out, a hard link to /" + e.link + ", which is not there");
    std::string host = place(e.path, true);
    if (host.empty()) return problem(e.path, "left out, its parent is not a directory");
    if (host == target) return;
    replace(host);
    if (::link(target.c_str(), host.c_str()) != 0) problem(e.path, std::strerror(errno));
  }

  support::FileRoot root_;
  std::vector<std::string>* problems_;
  std::string verified_;  // the last parent directory checked to lie inside the root
};

}  // namespace

std::optional<std::string> cached_root(const std::string& cache, const std::string& key,
                                       std::vector<std::string>* problems, CacheLease* lease) {
  std::string dir = cache + "/roots/" + key;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || (lease && !lease->hold(dir + ".entry"))) return std::nullopt;
  std::ifstream in(dir + ".problems");
  for (std::string line; std::getline(in, line);) problems->push_back(line);
  return dir;
}

std::optional<std::string> compose_root(const std::string& cache, const std::string& key,
                                        const std::vector<Layer>& layers, std::vector<std::string>* problems,
                                        std::string* error, CacheLease* lease,
                                        const std::vector<std::string>& layer_keys) {
  if (std::optional<std::string> cached = cached_root(cache, key, problems, lease)) return cached;
  std::string dir = cache + "/roots/" + key;
  std::error_code ec;
  std::string problems_file = dir + ".problems";
  fs::create_directories(cache + "/roots", ec);
  std::ostringstream tmp_name;
  tmp_name << cache << "/roots/.tmp-" << key << "-" << ::getpid();
  std::string tmp = tmp_name.str();
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec)) {
    *error = tmp + ": " + ec.message();
    return std::nullopt;
  }
  std::vector<std::string> found;
  Composer composer(tmp, &found);
  for (const Layer& layer : layers) composer.apply(layer);
  {
    std::ofstream out(problems_file + ".tmp");
    for (const std::string& p : found) out << p << "\n";
  }
  // Its marker (cache.h): the links to layer files are the layers' bytes, so only the rest counts.
  CacheWriteLock writing(cache);
  std::rename((problems_file + ".tmp").c_str(), problems_file.c_str());
  if (!write_marker(dir + ".entry", marker_text(disk_bytes(tmp, false), layer_keys), lease)) {
    fs::remove_all(tmp, ec);
    *error = dir + ".entry: cannot write the root's marker";
    return std::nullopt;
  }
  if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
    int why = errno;
    fs::remove_all(tmp, ec);
    if (!fs::is_directory(dir, ec)) {
      *error = dir + ": " + std::strerror(why);
      return std::nullopt;
    }
  }
  problems->insert(problems->end(), found.begin(), found.end());
  return dir;
}

}  // namespace envdoctor::image
