#include "python/ownership.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <set>

namespace envdoctor::python {

namespace {

const std::vector<const Distribution*> kNoOwners;
const std::vector<OwnershipIndex::Listing> kNoListings;

void add_owner(std::vector<const Distribution*>& owners, const Distribution* d) {
  if (std::find(owners.begin(), owners.end(), d) == owners.end()) owners.push_back(d);
}

}  // namespace

std::string canonical_owner_key(const fs::path& path) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(path.parent_path(), ec);
  if (ec) return path.lexically_normal().string();
  return (dir / path.filename()).string();
}

OwnershipIndex::OwnershipIndex(const std::vector<Distribution>& distributions) : distributions_(&distributions) {
  for (const Distribution& d : distributions) {
    for (const RecordEntry& e : d.record) add_owner(by_path_[e.resolved.string()], &d);
    for (const ImportRoot& r : d.editable_roots) editable_.push_back({r, &d});
  }
}

// The canonical directory of `path` and its file name. The paths are lexically normal: split at
// the last '/' as strings, which costs a fraction of std::filesystem's component split, run for
// every file of every RECORD. A path that is not plainly "DIR/NAME" is split as fs::path splits it.
std::string OwnershipIndex::canonical_key(const std::string& path) const {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == path.size()) {
    fs::path owned(path);
    return (fs::path(canonical_dir(owned.parent_path().string())) / owned.filename()).string();
  }
  std::string dir = canonical_dir(path.substr(0, slash));
  if (dir.empty() || dir.back() != '/') dir += '/';
  return dir.append(path, slash + 1);
}

std::string OwnershipIndex::canonical(const std::string& path) const {
  std::lock_guard lock(mu_);
  return canonical_dir(path);
}

std::string OwnershipIndex::canonical_dir(const std::string& dir) const {
  if (auto it = canonical_dirs_.find(dir); it != canonical_dirs_.end()) return it->second;
  std::string canonical = resolve_dir(dir);
  canonical_dirs_.emplace(dir, canonical);
  return canonical;
}

// weakly_canonical(dir), one component at a time on top of the parent's answer: realpath asks
// readlink of every component of every directory (ten of them for a directory of site-packages),
// where the parent's answer is known, and one lstat says whether the last component is a link.
// Only a link (and a path with "." or ".." in it, whose meaning depends on the links before it)
// is left to weakly_canonical.
std::string OwnershipIndex::resolve_dir(const std::string& dir) const {
  auto weakly = [&](const std::string& path) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(path, ec);
    return ec ? dir : canonical.string();
  };
  auto dot_component = [&]() {
    return dir.find("/./") != std::string::npos || dir.find("/../") != std::string::npos || dir.ends_with("/.") ||
           dir.ends_with("/..");
  };
  if (dir == "/") return dir;
  if (dir.empty() || dir[0] != '/' || dir.back() == '/' || dir.find("//") != std::string::npos || dot_component())
    return weakly(dir);
  size_t slash = dir.rfind('/');
  std::string parent = canonical_dir(slash == 0 ? "/" : dir.substr(0, slash));
  std::string path = (parent == "/" ? "" : parent) + dir.substr(slash);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT || errno == ENOTDIR ? path : weakly(dir);
  return S_ISLNK(st.st_mode) ? weakly(path) : path;
}

const std::vector<const Distribution*>& OwnershipIndex::owners(const fs::path& path) const {
  std::string normal = path.lexically_normal().string();
  if (auto it = by_path_.find(normal); it != by_path_.end()) return it->second;
  // The checks ask from several threads; the canonical maps are built on first need.
  std::lock_guard lock(mu_);
  const std::vector<const Distribution*>& recorded = recorded_owners(normal);
  return recorded.empty() && !editable_.empty() ? editable_owners(normal) : recorded;
}

// The editable installs that import `normal`, by its spelling or, through a linked directory, by
// its canonical one.
const std::vector<const Distribution*>& OwnershipIndex::editable_owners(const std::string& normal) const {
  auto [it, inserted] = editable_owners_.try_emplace(normal);
  if (!inserted) return it->second;
  std::string canonical = canonical_key(normal);
  for (const EditableClaim& c : editable_)
    if (imports_from(c.root, normal) || (canonical != normal && imports_from(c.root, canonical)))
      add_owner(it->second, c.owner);
  std::sort(it->second.begin(), it->second.end(), std::less<const Distribution*>());  // inventory order
  return it->second;
}

const std::vector<const Distribution*>& OwnershipIndex::recorded_owners(const std::string& normal) const {
  if (!canonical_built_) {
    // One realpath per directory, not per file: environments hold 10^5 files in 10^4 dirs. A
    // file whose canonical path is its own needs no entry here: by_path_ answers for it.
    for (const auto& [p, owners] : by_path_) {
      size_t slash = p.rfind('/');
      if (slash != std::string::npos && slash != 0 && slash + 1 != p.size()) {
        std::string dir = p.substr(0, slash);
        if (canonical_dir(dir) == dir) continue;
      }
      std::string key = canonical_key(p);
      if (key == p) continue;
      for (const Distribution* d : owners) add_owner(by_canonical_[key], d);
    }
    canonical_built_ = true;
  }
  // The canonical path's owners: those that list it so, and those that list it through a link.
  std::string key = canonical_key(normal);
  auto direct = by_path_.find(key);
  auto linked = by_canonical_.find(key);
  if (linked == by_canonical_.end()) return direct != by_path_.end() ? direct->second : kNoOwners;
  if (direct == by_path_.end()) return linked->second;
  auto [merged, inserted] = merged_.try_emplace(key);
  if (inserted) {
    merged->second = direct->second;
    for (const Distribution* d : linked->second) add_owner(merged->second, d);
    // Inventory order: the distributions lie in one vector.
    std::sort(merged->second.begin(), merged->second.end(), std::less<const Distribution*>());
  }
  return merged->second;
}

const std::vector<const Distribution*>& OwnershipIndex::owners(const std::string& path) const {
  // A simulation asks this for every ELF file after each change: building an fs::path and its
  // normal form cost more than the rest of the question.
  if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
  return owners(fs::path(path));
}

const std::vector<OwnershipIndex::Listing>& OwnershipIndex::listed_as(std::string_view name) const {
  std::call_once(names_built_, [&] {
    for (const Distribution& d : *distributions_)
      for (const RecordEntry& e : d.record) by_name_[path_file_name(e.resolved.native())].push_back({&d, &e});
  });
  if (name.find('/') != std::string_view::npos) return kNoListings;  // never one component's name
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoListings : it->second;
}

std::vector<fs::path> OwnershipIndex::shared_paths() const {
  std::vector<fs::path> out;
  for (const auto& [p, owners] : by_path_) {
    std::set<std::string> projects;
    for (const Distribution* d : owners) projects.insert(d->installation_key());
    if (projects.size() > 1) out.emplace_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace envdoctor::python
