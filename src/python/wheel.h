// Wheels (PEP 427, PyPA "Binary distribution format"), read in place with libzip.
//
// Opening checks the archive before anything is believed: a file that is not a zip or is
// truncated is refused by libzip (ZIP_CHECKCONS); a member name that is absolute, holds a ".."
// component or a backslash, or appears twice is refused (pip would write outside its target or
// install whichever copy it met last); so are sums of declared sizes above WheelLimits::max_total
// and members compressed more than max_ratio to one (zip bombs). Reads are bounded
// again while decompressing, since declared sizes can lie.
//
// The .dist-info directory is the one top-level "<name>-<version>.dist-info" (pip refuses
// zero or several); WHEEL says Root-Is-Purelib; METADATA and RECORD are parsed with the
// inventory's readers. install_path() says where pip would put each member for a given
// environment: the purelib or platlib root, or "<name>-<version>.data/<scheme>/..." mapped to
// that scheme's directory.
#pragma once

#include <zip.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/distribution.h"
#include "python/interpreter.h"
#include "python/tags.h"

namespace envdoctor::python {

constexpr u64 kMaxWheelMetadata = 64 * 1024 * 1024;  // METADATA, RECORD, WHEEL

struct WheelLimits {
  u64 max_total = u64{4} << 30;  // bytes, summed over the declared sizes and over what is read
  // Deflate cannot exceed about 1032:1, so this catches bzip2/LZMA/zstd bombs and headers that
  // lie; against deflate bombs the total is what holds.
  u64 max_ratio = 1100;
};

// Where files of a distribution go, as pip's scheme for an environment.
struct InstallScheme {
  fs::path purelib, platlib, scripts, headers, data;
};
// pip's scheme for installing `project` (WheelName::project()) into `env` (headers:
// include/site/pythonX.Y/<project> inside a virtual environment, as pip's locations module
// does).
InstallScheme install_scheme(const PythonEnvironment& env, std::string_view project);

struct WheelMember {
  std::string name;  // as in the zip
  u64 size = 0;      // declared uncompressed size
  u64 compressed_size = 0;
  u64 index = 0;  // libzip index
  bool is_directory = false;
};

// Whether `path` is a file a wheel could be read from: false with `error` set ("nope.whl: no
// such file", "dist: a directory, not a wheel file") otherwise. Cheap; Wheel::open starts with it.
bool wheel_file_exists(const fs::path& path, std::string* error);

class Wheel {
 public:
  // Opens and validates `path`. nullptr with `error` set ("x.whl: not a zip archive", "x.whl:
  // member '../evil' escapes the wheel") when the wheel must be refused.
  static std::unique_ptr<Wheel> open(const fs::path& path, std::string* error, const WheelLimits& limits = {});
  ~Wheel();
  Wheel(const Wheel&) = delete;
  Wheel& operator=(const Wheel&) = delete;

  const fs::path& path() const { return path_; }
  const WheelName& filename() const { return name_; }
  const std::vector<WheelMember>& members() const { return members_; }
  const std::string& dist_info_dir() const { return dist_info_; }  // "foo-1.0.dist-info"
  std::string data_dir() const;                                    // "foo-1.0.data"
  bool root_is_purelib() const { return root_is_purelib_; }
  // METADATA's Name and Version (the wheel name's when METADATA lacks them), Requires-Dist,
  // and RECORD with paths resolved against "/" (the wheel's root). Problems (a RECORD row for
  // a file the wheel lacks, a member RECORD does not list, a bad hash) are in problems.
  const Distribution& metadata() const { return metadata_; }

  // The distribution as pip would leave it in `scheme`: metadata_dir and site_dir under the
  // root scheme directory, and a record of every file of install_plan() with the wheel
  // RECORD's hash and size for it (none for scripts, whose shebang pip rewrites). INSTALLER
  // and the console scripts pip generates from entry_points.txt are not included.
  Distribution as_installed(const InstallScheme& scheme) const;

  // The member's bytes, at most `limit` of them: nullopt with `error` set when the member is
  // missing, larger than `limit`, corrupt (CRC) or would exceed the wheel's total read bound.
  std::optional<std::vector<u8>> read(std::string_view member, u64 limit, std::string* error);

  // Where pip would install `member`; nullopt for directories and for a member of the .data
  // directory outside its five schemes (pip refuses those).
  std::optional<fs::path> install_path(const WheelMember& member, const InstallScheme& scheme) const;

  // The files pip would write for this wheel, with their destinations, in zip order.
  std::vector<std::pair<const WheelMember*, fs::path>> install_plan(const InstallScheme& scheme) const;

 private:
  Wheel() = default;
  bool load(std::string* error);
  bool load_metadata(std::string* error);
  void check_record();
  void check_data_dir();
  const WheelMember* find(std::string_view name) const;

  fs::path path_;
  zip_t* zip_ = nullptr;
  WheelName name_;
  std::vector<WheelMember> members_;
  std::string dist_info_;
  bool root_is_purelib_ = true;
  Distribution metadata_;
  u64 bytes_read_ = 0;
  WheelLimits limits_;
  std::map<std::string, u64, std::less<>> by_name_;
};

// True when `member` (a zip entry name) is safe to extract: relative, no "..", no backslash,
// no NUL.
bool safe_member_name(std::string_view member);

}  // namespace envdoctor::python
