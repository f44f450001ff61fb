// Who owns a file: absolute path -> the distributions whose records list it.
//
// Keys are the lexically normalized absolute paths of the records (RecordEntry::resolved), so a
// lookup by the same spelling is one hash probe. A path reached through a symlinked directory
// (lib64 -> lib, a site-packages that is a link) is found by the second map, built on first
// need from each owned path's canonical form (realpath of the directory, the file name kept).
// A distribution that lists a path twice counts once. A file no record lists is an editable
// install's when import reaches it through one of that install's roots (python/editable.h): the
// project's own tree, which pip never records.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "python/distribution.h"

namespace envdoctor::python {

class OwnershipIndex {
 public:
  // Indexes `distributions`, which must outlive the index (it keeps pointers into it).
  explicit OwnershipIndex(const std::vector<Distribution>& distributions);

  // The owners of `path`, in inventory order: the distributions whose records list it, else the
  // editable installs that import it from their project; empty when none.
  const std::vector<const Distribution*>& owners(const fs::path& path) const;
  // The same for a path as spelled: one hash probe, and no fs::path built, when it is spelled as
  // the records are (absolute, normalized), as the ELF index's paths are.
  const std::vector<const Distribution*>& owners(const std::string& path) const;

  // `path` as std::filesystem::weakly_canonical has it, or as given when that fails: each directory
  // is resolved once for the index's life and its answer kept, then only a path's last component
  // is looked at (one lstat), where weakly_canonical asks readlink of every component of every path.
  std::string canonical(const std::string& path) const;

  // Paths listed by two or more distributions of different installations (conda's record and the
  // .dist-info it installed, or Debian's .dist-info and .egg-info of one package, are one), sorted.
  std::vector<fs::path> shared_paths() const;

  // Number of distinct owned paths.
  size_t size() const { return by_path_.size(); }

  // A row of a record, with the distribution whose record it is.
  struct Listing {
    const Distribution* dist;
    const RecordEntry* entry;
  };
  // The rows of every record whose path's file name is `name` (python::named), in inventory order
  // and then record order: who lists a library the loader does not find. Indexed on the first
  // question, so that a run with many missing libraries reads the records once, not once each.
  const std::vector<Listing>& listed_as(std::string_view name) const;

 private:
  struct EditableClaim {
    ImportRoot root;
    const Distribution* owner;
  };
  std::vector<EditableClaim> editable_;
  const std::vector<Distribution>* distributions_;
  mutable std::once_flag names_built_;
  mutable std::unordered_map<std::string_view, std::vector<Listing>> by_name_;  // views into the records
  std::unordered_map<std::string, std::vector<const Distribution*>> by_path_;
  mutable std::unordered_map<std::string, std::vector<const Distribution*>> by_canonical_;
  mutable bool canonical_built_ = false;
  // Owners of a canonical path that by_path_ and by_canonical_ both hold, merged on first need.
  mutable std::unordered_map<std::string, std::vector<const Distribution*>> merged_;
  mutable std::unordered_map<std::string, std::string> canonical_dirs_;                        // directory -> realpath
  mutable std::unordered_map<std::string, std::vector<const Distribution*>> editable_owners_;  // path -> claims
  mutable std::mutex mu_;                                                                    // guards the members above
  std::string canonical_dir(const std::string& dir) const;                                   // holds mu_
  std::string resolve_dir(const std::string& dir) const;                                     // holds mu_
  std::string canonical_key(const std::string& path) const;                                  // holds mu_
  const std::vector<const Distribution*>& recorded_owners(const std::string& normal) const;  // holds mu_
  const std::vector<const Distribution*>& editable_owners(const std::string& normal) const;  // holds mu_
};

// The directory part resolved through symlinks (when it exists), the last component kept:
// what the index compares for paths not found by their spelling.
std::string canonical_owner_key(const fs::path& path);

}  // namespace envdoctor::python
