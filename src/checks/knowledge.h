// What envdoctor knows about the world outside the environment: which pip packages ship which
// SONAMEs (NVIDIA's CUDA 11/12/13 wheels, into which folder), and which releases are known
// placeholders. Read once from data/sonames.json.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::checks {

struct KnownLibrary {
  std::string soname;
  std::string package;  // the pip name
  int cuda = 0;         // CUDA major (12), 0 when not a CUDA library
  std::string folder;   // where the wheel installs it, relative to site-packages
};

struct KnownPlaceholder {
  std::string name;
  std::string note;
};

class Knowledge {
 public:
  // Reads `<data_dir>/sonames.json`; nullopt with `error` set when missing or malformed (the
  // file, the entry and the field named: "data/sonames.json: libraries[3].cuda: ...").
  static std::optional<Knowledge> load(const std::string& data_dir, std::string* error);

  // Every package known to ship `soname`, in table order.
  std::vector<const KnownLibrary*> providers(std::string_view soname) const;
  const KnownPlaceholder* placeholder(std::string_view normalized_name) const;
  // The CUDA major a file name belongs to, from the table ("libcudart.so.12" -> 12); 0 if
  // unknown or ambiguous.
  int cuda_major(std::string_view soname) const;
  const std::vector<KnownLibrary>& libraries() const { return libraries_; }

 private:
  std::vector<KnownLibrary> libraries_;
  std::vector<KnownPlaceholder> placeholders_;
};

}  // namespace envdoctor::checks
