// A private temporary directory that lives as long as its owner and is removed with everything
// in it however the owner's scope ends: the wheels `envdoctor pip` has pip download, the
// distributions `envdoctor uv pip` has uv lay out.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace envdoctor::support {

class ScratchDir {
 public:
  // A new directory "<tmp>/<prefix>XXXXXX" (mkdtemp: mode 0700, a name nobody else holds).
  // nullptr with `error` set when none can be made.
  static std::shared_ptr<ScratchDir> create(const std::string& prefix, std::string* error);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace envdoctor::support
