// Editable installs: where Python imports an editable distribution's modules from, read from the
// files the installer wrote and never run.
//
// Three shapes are read:
//   setup.py develop   site-packages/NAME.egg-link (its first line: the directory holding
//                      NAME.egg-info) and easy-install.pth, whose line puts that directory on
//                      sys.path; the distribution is the .egg-info found there.
//   PEP 660, a path    a .pth file that the .dist-info's RECORD lists (setuptools'
//                      __editable__.NAME-VER.pth in its "lenient" src layout and its compat mode,
//                      hatchling's _NAME.pth, flit's, pdm's and poetry's NAME.pth): each path line
//                      is a directory site.py appends to sys.path (in setuptools' strict mode, a
//                      tree of links to the project's files in build/__editable__.*, whose links
//                      import opens: a module's $ORIGIN is the link's directory).
//   PEP 660, a finder  the same .pth with `import __editable___NAME_VER_finder;
//                      __editable___NAME_VER_finder.install()`: setuptools' MetaPathFinder, whose
//                      MAPPING (top-level name -> package directory, or a module's path without
//                      its suffix) and NAMESPACES (name -> directories) are read as the Python
//                      literals setuptools writes; and the `editables` project's bootstrap
//                      (hatchling's dev-mode-exact), `F.map_module('NAME', 'PATH')`.
// python/distribution.h's read_editable_installs gives each distribution its roots. A
// distribution is editable when direct_url.json says `"dir_info": {"editable": true}`, its RECORD
// lists a setuptools __editable__ .pth, or an .egg-link names its directory. A .pth is read only
// in a directory site.py reads .pth files from (site-packages, dist-packages). scikit-build-core's
// redirect installs its compiled modules into site-packages (RECORD lists them), and only its
// Python sources are redirected; meson-python's loader maps modules from the build directory at
// import time (it runs ninja first), which is not read.
//
// What Python imports below a root is reached through package directories: every directory on
// the way is a Python identifier. setuptools' build/lib.* copies and build/temp.* objects are not
// (nor .git, .venv or a build-1 directory), so they are never modules of the package.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/root.h"

namespace envdoctor::python {

// One place an editable distribution's modules are imported from.
struct ImportRoot {
  enum Kind {
    kPath,     // `path` is a directory on sys.path: every module below it
    kPackage,  // package `name` is the directory `path` (a finder's mapping)
    kModule,   // module `name` is the file `path`, or `path` plus an import suffix (setuptools'
               // mapping of a top-level module: "/p/_fast" for "/p/_fast.cpython-311-x86_64-linux-gnu.so")
  };
  Kind kind = kPath;
  std::string path;  // absolute, lexically normal
  std::string name;  // kPackage, kModule: the dotted name import asks for
  std::string via;   // the file that says so: the .pth, the finder's module, the .egg-link
  bool operator==(const ImportRoot&) const = default;
};

// Whether `name` is a Python identifier as a module or package name must be (ASCII letters,
// digits, '_', not starting with a digit; non-ASCII letters let through).
bool is_module_name(std::string_view name);

// Whether import reaches `path` (absolute, lexically normal) through `root`: below a kPath or
// kPackage directory through identifiers only; for a kModule, a file of its name in its directory.
bool imports_from(const ImportRoot& root, std::string_view path);

// site.py's reading of one .pth file of `site_dir`: the directories of its path lines (made
// absolute against `site_dir`, lexically normal; whether they exist is the caller's question),
// and its import lines, which site.py would run, as written.
struct PthLines {
  std::vector<std::string> dirs;
  std::vector<std::string> imports;
};
PthLines parse_pth(std::string_view text, const std::string& site_dir);

// setuptools' finder module: its MAPPING and NAMESPACES dictionaries. False when MAPPING is not a
// literal dictionary of strings.
struct FinderMapping {
  std::vector<std::pair<std::string, std::string>> mapping;
  std::vector<std::pair<std::string, std::vector<std::string>>> namespaces;
};
bool parse_setuptools_finder(std::string_view source, FinderMapping* out);

// The `editables` bootstrap: each `F.map_module('NAME', 'PATH')` call, in order.
std::vector<std::pair<std::string, std::string>> parse_editables_bootstrap(std::string_view source);

// The module an import line of a .pth imports first ("__editable___foo_0_1_finder" from
// "import __editable___foo_0_1_finder; __editable___foo_0_1_finder.install()"); "" when the line
// is not a plain `import NAME`.
std::string imported_module(std::string_view line);

// Whether site.py reads the .pth files of `site_dir`: the site directories it adds itself
// (site-packages, Debian's dist-packages), not a directory PYTHONPATH or a .pth line put on sys.path.
bool reads_pth_files(const std::string& site_dir);

// The roots one .pth file of an editable install gives (its path lines that are directories, the
// finders its import lines install), read through `root` (paths are the environment's own). An
// import line whose finder is not read, or a file that cannot be, is a problem naming `owner`.
std::vector<ImportRoot> read_editable_pth(const std::string& pth, const std::string& owner,
                                          const support::FileRoot& root, std::vector<std::string>* problems);

// The directory an .egg-link names (its first line, against the link's directory); nullopt when
// it names none.
std::optional<std::string> read_egg_link(const std::string& path, const support::FileRoot& root,
                                         std::vector<std::string>* problems);

}  // namespace envdoctor::python
