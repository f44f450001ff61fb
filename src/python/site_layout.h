// What `import site` does to sys.path, done without running any of the environment's code.
//
// Python's site.py (run at every start unless -S) appends the site directories to sys.path, each
// followed by what its .pth files name, and executes two kinds of code on the way: a .pth line
// that starts with "import" (setuptools' distutils-precedence.pth, editable installs' finders)
// and the modules sitecustomize and usercustomize. envdoctor never runs them. The directories
// come from the interpreter itself when it is run (the probe calls site.main() with its addsitedir
// recording and its customize steps removed: interpreter.cc), or from the rules of the
// distribution's own site.py when it is not (read_site_rules: Debian's dist-packages patch,
// Fedora's /usr/local prefix and lib64). The .pth files are then read here as site.py's
// addpackage reads them, in both cases, and the code they hold is reported as not run.
#pragma once

#include <string>
#include <vector>

#include "support/root.h"

namespace envdoctor::python {

// Code of the environment that site.py would run at the interpreter's start: a .pth file's
// "import" line, or the module sitecustomize or usercustomize.
struct SiteCode {
  std::string file;  // the .pth file, or the module's file (as sys.path spells it)
  size_t line = 0;   // the .pth file's line, from 1; 0 for a module
  std::string text;  // the line as written; the module's name for a module
};

struct SitePath {
  std::vector<std::string> sys_path;  // the interpreter's own entries, then what site added
  std::vector<SiteCode> not_run;      // in the order site.py would have run it
};

// site.py's rules of its version: 3.13 strips a UTF-8 byte order mark and splits lines as
// str.splitlines() does (CPython gh-77102). .pth files whose name starts with a dot are skipped
// from 3.13 and from the releases the fix was backported to as a security fix (gh-113659:
// 3.12.2, 3.11.8, 3.10.14, 3.9.19; PR 114146 is the 3.9 one); not by 3.8 here.
struct SiteVersion {
  int major = 3, minor = 0, micro = 0;
  bool at_least_313() const { return major > 3 || (major == 3 && minor >= 13); }
  bool skips_hidden_pth() const {
    if (at_least_313()) return true;
    int first_micro = minor == 12 ? 2 : minor == 11 ? 8 : minor == 10 ? 14 : minor == 9 ? 19 : -1;
    return major == 3 && first_micro >= 0 && micro >= first_micro;
  }
};

// site.main()'s addsitedir for each of `site_dirs` (in order; those that are not directories are
// skipped, as addsitepackages and addusersitepackages skip them), starting from `initial`, the
// interpreter's own sys.path after removeduppaths: a directory is appended unless already known,
// then its .pth files are read in name order as addpackage reads them. A path line, joined to the
// site directory and made normal (os.path.abspath), is appended when it exists and is not known;
// an "import" line is recorded in not_run. Under a root every file is read below it.
SitePath add_site_dirs(const std::vector<std::string>& initial, const std::vector<std::string>& site_dirs,
                       const SiteVersion& version, const support::FileRoot& root = {});

// The sitecustomize (and, when `user_site`, usercustomize) module that the import at the end of
// site.main() would find on `sys_path` (before "" is put first): a package, an extension module,
// a .py or a .pyc, in the order of Python's path finder.
std::vector<SiteCode> customize_modules(const std::vector<std::string>& sys_path, bool user_site,
                                        const support::FileRoot& root = {});

// os.path.normpath of an absolute POSIX path: "." and empty components dropped, ".." taken
// lexically (at the root it stays the root), "//" kept only when it is exactly two slashes.
std::string normpath(const std::string& path);

// How the distribution patched site.getsitepackages(), read from the interpreter's own site.py.
enum class SiteFlavor {
  kUpstream,  // PREFIX/{platlibdir,lib}/pythonX.Y/site-packages
  kDebian,    // PREFIX/local/lib/pythonX.Y/dist-packages, PREFIX/lib/python3/dist-packages, ...
  kFedora,    // upstream's, with /usr/local first outside a virtual environment
};

struct SiteRules {
  SiteFlavor flavor = SiteFlavor::kUpstream;
  std::string platlibdir = "lib";  // sys.platlibdir: where the standard library's os.py lies
};

// The rules of the interpreter whose standard library lies under `base_prefix` (version "3.11"):
// platlibdir is the directory of PREFIX/{lib64,lib}/pythonX.Y/os.py (getpath's landmark); the
// flavor is Debian's when its site.py names "dist-packages", Fedora's when it inserts "/usr/local"
// into PREFIXES.
SiteRules read_site_rules(const std::string& base_prefix, const std::string& xy, const support::FileRoot& root);

// site.getsitepackages(prefixes) under those rules, in a virtual environment or not.
std::vector<std::string> getsitepackages(const SiteRules& rules, const std::string& xy,
                                         const std::vector<std::string>& prefixes, bool in_venv);

}  // namespace envdoctor::python
