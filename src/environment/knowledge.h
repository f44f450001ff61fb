// What envdoctor knows about the world outside the environment: which pip packages ship which
// SONAMEs (NVIDIA's CUDA 11/12/13 wheels, into which folder), and which releases are known
// placeholders. Read once from data/sonames.json. And which libraries are the NVIDIA driver's
// (libcuda.so.1, libnvidia-ml.so.1): they come with the driver, never from a package
// (data/driver_libraries.json, the NVIDIA container toolkit's list). And what packages and
// libraries open by themselves, by name or by path (data/package_loads.json, package_rules.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "environment/package_rules.h"

namespace envdoctor::environment {

struct KnownLibrary {
  std::string soname;
  std::string package;  // the pip name
  int cuda = 0;         // CUDA major (12), 0 when not a CUDA library
  std::string folder;   // where the wheel installs it, relative to site-packages
};

// One of the NVIDIA driver's user-space libraries, as the NVIDIA container toolkit names it.
struct DriverLibrary {
  std::string prefix;      // "libcuda.so": the SONAME is this, or this and a version
  std::string capability;  // "compute", "utility", "video" (NVIDIA_DRIVER_CAPABILITIES)
};

// A plugin a package ships that only a request opens (data/plugins.json): its load errors are
// warnings.
struct Plugin {
  std::vector<std::string> packages;  // normalized distribution names
  std::vector<std::string> files;     // globs over a path's last components
  std::string why;
};

struct KnownPlaceholder {
  std::string name;
  std::string note;
};

class Knowledge {
 public:
  // Reads `<data_dir>/sonames.json`, `driver_libraries.json`, `plugins.json`
  // and `package_loads.json`; nullopt with `error` set when missing or malformed
  // (the file, the entry and the field named: "data/sonames.json: libraries[3].cuda: ...").
  static std::optional<Knowledge> load(const std::string& data_dir, std::string* error);

  // Every package known to ship `soname`, in table order.
  std::vector<const KnownLibrary*> providers(std::string_view soname) const;
  const KnownPlaceholder* placeholder(std::string_view normalized_name) const;
  // The CUDA major a file name belongs to, from the table ("libcudart.so.12" -> 12); 0 if
  // unknown or ambiguous.
  int cuda_major(std::string_view soname) const;
  const std::vector<KnownLibrary>& libraries() const { return libraries_; }
  // The driver library `name` (a NEEDED entry or SONAME: "libcuda.so.1") is, or nullptr.
  const DriverLibrary* driver_library(std::string_view name) const;
  // The row of data/plugins.json that names `path`, a file of distribution `package` (normalized),
  // or nullptr.
  const Plugin* plugin(std::string_view package, const std::string& path) const;
  // The rules of data/package_loads.json (docs/package-loads.md).
  const PackageRules& package_rules() const { return package_rules_; }

 private:
  std::vector<KnownLibrary> libraries_;
  std::vector<KnownPlaceholder> placeholders_;
  std::vector<DriverLibrary> driver_libraries_;
  std::vector<Plugin> plugins_;
  PackageRules package_rules_;
};

}  // namespace envdoctor::environment
