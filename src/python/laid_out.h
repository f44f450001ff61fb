// A distribution laid out in a directory of its own, as `uv pip install --target DIR --no-deps
// NAME==VERSION` leaves one wheel: its files as they would lie under site-packages (console
// scripts in DIR/bin), the .dist-info beside them, its RECORD's paths relative to DIR. Read as a
// wheel is read (python/wheel.h): the metadata, and where each file would go in an environment's
// scheme, so that the simulation can install it without a wheel file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/distribution.h"
#include "python/wheel.h"

namespace envdoctor::python {

struct LaidOutFile {
  const RecordEntry* entry = nullptr;  // RECORD's row for it
  std::string path;                    // relative to the directory
  u64 size = 0;                        // as it lies there now
};

class LaidOutDistribution {
 public:
  // The one *.dist-info directory of `dir` read (METADATA, RECORD, WHEEL's Root-Is-Purelib).
  // nullopt with `error` set when there is none, or several, or no RECORD.
  static std::optional<LaidOutDistribution> open(const fs::path& dir, std::string* error);

  const fs::path& dir() const { return dir_; }
  // METADATA's name, version and Requires-Dist; RECORD resolved against the directory.
  const Distribution& metadata() const { return metadata_; }

  // Where each file RECORD lists would go in `scheme`: bin/ to the scripts directory, the rest
  // to purelib or platlib as WHEEL says. A RECORD path that leaves the directory (a target
  // install's "../../bin/x"), or a file that is not there, is left out.
  std::vector<std::pair<LaidOutFile, fs::path>> install_plan(const InstallScheme& scheme) const;

  // The distribution as installed in `scheme`: metadata_dir and site_dir under its root, and a
  // record of every file of install_plan(), with RECORD's hash and size; its INSTALLER is the
  // one the installer that laid it out wrote.
  Distribution as_installed(const InstallScheme& scheme) const;

 private:
  fs::path root(const InstallScheme& scheme) const { return root_is_purelib_ ? scheme.purelib : scheme.platlib; }

  fs::path dir_;
  std::string dist_info_;  // "foo-1.0.dist-info"
  bool root_is_purelib_ = true;
  Distribution metadata_;
};

}  // namespace envdoctor::python
