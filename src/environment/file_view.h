// The file system as the checks see it: the disk, less the files a simulated uninstall
// (--without) removes, plus the files a simulated install (--with) writes. Nothing is ever
// written to disk; a check asks here instead of calling lstat or reading a file itself. Under
// --root the paths are the container's and the files are read below its root.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "elf/mapped_file.h"
#include "python/interpreter.h"

namespace envdoctor::environment {

// What the walk of the environment's directories saw, one getdents64 entry at a time: each
// directory read whole, and each entry's type. A question about a file in one of them needs no
// system call of its own.
struct Listing {
  enum class Type : unsigned char { kFile, kLink, kDirectory, kOther };
  std::unordered_set<std::string> dirs;  // read whole
  std::unordered_map<std::string, Type> entries;
};

class FileView {
 public:
  struct Facts {
    u64 size = 0;
    bool is_link = false;
  };
  // What lstat would say; nullopt for a missing (or removed) file.
  std::optional<Facts> stat(const std::string& path) const;
  // Whether the path exists (a link counts as itself, as for lstat) and is a link, without its
  // size: from the walk's listing where it read the path's directory, else lstat.
  enum class Kind { kMissing, kFile, kLink };
  Kind kind(const std::string& path) const;
  bool exists(const std::string& path) const { return kind(path) != Kind::kMissing; }
  void set_listing(Listing listing) { listing_ = std::make_shared<const Listing>(std::move(listing)); }
  // SHA-256 of the content; nullopt when unreadable.
  std::optional<std::vector<u8>> sha256(const std::string& path) const;
  // The MD5 sum in lowercase hex, for dpkg's md5sums; nullopt for a file a simulation changed.
  std::optional<std::string> md5(const std::string& path) const;

  void remove(const std::string& path);
  // Whether `path` is a directory (lstat: a link to one is not) on disk, or holds a file a
  // simulated install wrote.
  bool is_directory(const std::string& path) const;
  // Removes the tree below the directory `dir` as remove_dir_all would: every entry below it on
  // disk (a link as itself, never followed) and every file a simulated install wrote there.
  // Returns the paths removed.
  std::vector<std::string> remove_tree(const std::string& dir);
  void add(const std::string& path, u64 size, std::optional<std::vector<u8>> sha256,
           std::optional<std::string> text = std::nullopt);
  // The first `limit` bytes of a file as text (a package's __init__.py): what a simulated install
  // wrote, else the disk; "" when unreadable or removed.
  std::string read_text(const std::string& path, u64 limit) const;
  bool removed(const std::string& path) const { return removed_.count(path) != 0; }
  bool changed() const { return !removed_.empty() || !added_.empty(); }
  // Every path removed or written, as the checks spell them.
  std::vector<std::string> changed_paths() const;

  // Paths are a container's own, read below its root (--root).
  void set_root(support::FileRoot root) { root_ = std::move(root); }

 private:
  struct Added {
    u64 size = 0;
    std::optional<std::vector<u8>> sha256;
    std::optional<std::string> text;  // kept for the few files read as text
  };
  support::FileRoot root_;
  std::shared_ptr<const Listing> listing_ = std::make_shared<const Listing>();  // shared by a what-if's copy
  std::set<std::string> removed_;
  std::map<std::string, Added> added_;
};

// SHA-256 of a file on disk, read through a read-only mapping; nullopt when unreadable.
// Whether SHA-256 can be computed at all (libcrypto is opened on first use); when not, `error`
// says why. A command that promises to verify hashes asks first, so that a missing library is
// its error, not a silent "no hash checked".
bool sha256_available(std::string* error);
std::optional<std::vector<u8>> sha256_file(const std::string& path);
std::vector<u8> sha256_bytes(Bytes bytes);
std::optional<std::string> md5_hex_file(const std::string& path);

}  // namespace envdoctor::environment
