// The inventory: every installed distribution of the environment and the files it claims.
//
// Three record formats are read (PyPA "Recording installed projects" and its predecessors):
//   *.dist-info   METADATA (Core Metadata: Name, Version, Requires-Dist), RECORD, INSTALLER;
//   *.egg-info    PKG-INFO, installed-files.txt (paths relative to the .egg-info directory),
//                 requires.txt (one requirement a line, "[extra]" or "[extra:marker]" sections);
//   conda-meta/*.json under the prefix: name, version, files (relative to the prefix) and,
//                 when present, paths_data with each file's sha256 and size.
// Site directories are scanned in sys.path order, so for two copies of one project the first
// is the one `import` finds. Every defect (a missing METADATA, a hostile RECORD row, an
// unreadable directory) becomes a problem string on the distribution or the inventory; nothing
// stops the scan.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "python/dpkg.h"
#include "python/editable.h"
#include "python/interpreter.h"
#include "python/markers.h"
#include "python/record.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

// Where a distribution came from, as its installer recorded it in direct_url.json (PEP 610,
// "Recording the Direct URL Origin of installed distributions"). Absent for an index install:
// pip writes the file only for a requirement given as a URL or a path.
struct DirectUrl {
  enum Kind { kNone, kArchive, kVcs, kDirectory };
  Kind kind = kNone;
  std::string url;           // as recorded: "file:///w/provlib-1.0-py3-none-any.whl", "https://github.com/a/b"
  std::string vcs;           // vcs_info.vcs: "git", "hg", "bzr", "svn"
  std::string commit_id;     // vcs_info.commit_id: the exact revision installed
  std::string subdirectory;  // where the project lies inside the archive, directory or repository
  bool editable = false;     // dir_info.editable (pip install -e)
};

// The direct_url.json text parsed; kNone for anything malformed or without a url.
DirectUrl parse_direct_url(std::string_view text);

struct Distribution {
  enum Kind { kDistInfo, kEggInfo, kConda };

  std::string name;  // as METADATA spells it ("Flash_Attn")
  std::string version;
  // Who installed the files and answers for them: INSTALLER's first line as written ("pip",
  // "uv", "conda", "poetry", ...); "conda" for a conda-meta record; "debian" for a distribution
  // without INSTALLER whose metadata dpkg owns (identify_installers); "" when nobody says.
  std::string installer;
  // The tool that changes it, from `installer`: pip also for a distribution no installer names
  // (setup.py install, an .egg-info), since pip is what uninstalls and reinstalls those.
  enum class Tool { kPip, kUv, kConda, kDebian, kOther };
  Tool tool() const {
    if (installer == "uv") return Tool::kUv;
    if (installer == "conda") return Tool::kConda;
    if (installer == "debian") return Tool::kDebian;
    return installer.empty() || installer == "pip" ? Tool::kPip : Tool::kOther;
  }
  // The tool's name as INSTALLER spells it ("pip", "uv", "conda", "debian"); "" for kOther.
  static std::string_view tool_name(Tool tool) {
    switch (tool) {
      case Tool::kPip: return "pip";
      case Tool::kUv: return "uv";
      case Tool::kConda: return "conda";
      case Tool::kDebian: return "debian";
      case Tool::kOther: break;
    }
    return "";
  }
  // The installer's own name and version for it, when they are not the distribution's: the
  // Debian package ("python3-torch", "1.13.1+dfsg-4"), or the conda record that installed this
  // .dist-info ("pytorch", "2.1.0").
  std::string installer_package;
  std::string installer_version;
  fs::path metadata_dir;  // the .dist-info/.egg-info directory, or conda-meta/<pkg>.json
  fs::path site_dir;      // the directory the record's paths are relative to (prefix for conda)
  std::vector<Requirement> requires_dist;
  DirectUrl origin;  // direct_url.json; kNone when installed from an index (or not recorded)
  std::vector<RecordEntry> record;
  // An editable install's places import finds its modules in (python/editable.h): the project's
  // directories, which no record lists; empty for any other install.
  std::vector<ImportRoot> editable_roots;
  std::vector<std::string> problems;
  Kind kind = kDistInfo;

  // PEP 503 normalized name, for matching.
  std::string key() const;
  // Which release is installed where: what a change to the environment changes.
  struct Id {
    std::string key;           // key()
    std::string version;       // as METADATA spells it
    std::string metadata_dir;  // "" where only the release matters
    auto operator<=>(const Id&) const = default;
  };
  Id id() const { return {key(), version, metadata_dir.string()}; }
  Id release() const { return {key(), version, ""}; }
  // Requires-Dist lines that apply to `env` (no extras requested).
  std::vector<Requirement> requirements_for(const MarkerEnvironment& env,
                                            const std::vector<std::string>& extras = {}) const;
  // True when every RECORD entry lies inside metadata_dir (a placeholder that installs
  // nothing but its own metadata).
  bool metadata_only() const;
  // One installation, whatever records describe it: conda's record and the .dist-info it wrote,
  // or Debian's .dist-info and .egg-info of one package, share this key.
  std::string installation_key() const;
  // Whether RECORD answers for the files: not when dpkg or a conda record does.
  bool judged_by_record() const;
};

struct Inventory {
  std::vector<Distribution> distributions;  // sys.path order, then conda's records
  std::vector<std::string> problems;        // about directories rather than one distribution
  std::vector<std::string> site_dirs;       // the directories scanned

  // The first distribution whose normalized name matches `name` (the one import would use);
  // nullptr when none.
  const Distribution* find(std::string_view name) const;
  // Where `find(name)` finds nothing: the installed name a slip of the keyboard would explain
  // ("provlb" for provlib), as its METADATA spells it; nullopt when none is that near.
  std::optional<std::string> nearest_name(std::string_view name) const;
};

// Scans the environment: env.site_dirs() in order, then prefix/conda-meta.
Inventory read_inventory(const PythonEnvironment& env);

// The directories below which a site directory's RECORD paths may point: the environment
// prefix when the site directory lies inside it, else three levels above a
// ".../lib/pythonX.Y/site-packages" (a user base), else the site directory itself.
fs::path install_root_for(const fs::path& site_dir, const fs::path& prefix);

// One site directory's *.dist-info and *.egg-info, sorted by directory name.
std::vector<Distribution> scan_site_dir(const fs::path& site_dir, const fs::path& root,
                                        std::vector<std::string>* problems);

Distribution read_dist_info(const fs::path& dir, const fs::path& site_dir, const fs::path& root);
Distribution read_egg_info(const fs::path& dir, const fs::path& site_dir, const fs::path& root);
// Every conda-meta/*.json of `prefix` (none when the directory is absent).
std::vector<Distribution> read_conda_meta(const fs::path& prefix, std::vector<std::string>* problems);

// Each editable install's roots (python/editable.h), read through `root` from the files its
// installer left: a .dist-info whose direct_url.json says editable, or whose RECORD lists
// setuptools' __editable__ .pth, from the .pth files RECORD lists in its site directory; an
// .egg-info from the .egg-link that names its directory in a site directory. A path line that
// names another project's site directory claims nothing.
void read_editable_installs(Inventory& inventory, const support::FileRoot& root = {});

// Who installed each distribution, where INSTALLER does not say it all: a .dist-info that a conda
// record lists is that record's; one without INSTALLER whose metadata file dpkg owns is Debian's.
// dpkg's database is read only if some distribution has no INSTALLER.
void identify_installers(Inventory& inventory, const DpkgIndex& dpkg);

// requires.txt of an egg-info: "[extra]" and "[extra:marker]" / "[:marker]" sections turned
// into PEP 508 markers, as pkg_resources and importlib.metadata do.
std::vector<std::string> egg_requires_to_pep508(std::string_view text);

}  // namespace envdoctor::python
