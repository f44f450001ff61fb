// Discovery: what the Python interpreter of the environment says about itself.
//
// The interpreter is run once, without a shell, as `EXE -S -` with SCRIPT on stdin and the user's
// own environment (PYTHONPATH, VIRTUAL_ENV and all: the sys.path the user's imports see is the
// one to check), and a time limit. -S keeps site.py from running at start: SCRIPT imports json,
// os, platform, site, sys and sysconfig from the interpreter's own library (never from the
// current directory or PYTHONPATH), calls site.main() with its addsitedir recording and its
// sitecustomize/usercustomize steps removed, and prints one JSON object. The .pth files of the
// directories site.main() named are read as site.py reads them (site_layout.h), their "import"
// lines and the customize modules kept as code not run: none of the environment's code runs. A
// missing, broken or hanging interpreter is an error string, never a crash or a hang.
//
// The no-exec path (`--prefix DIR`) runs nothing: it reads DIR/pyvenv.cfg (PEP 405), the version
// the interpreter's executable (or libpython) holds, and builds sys.path as getpath and the
// distribution's site.py would (site_layout.h: Debian's dist-packages, Fedora's lib64 and
// /usr/local), and fills the marker environment from uname(2) and glibc's own version.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "elf/mapped_file.h"
#include "python/markers.h"
#include "python/site_layout.h"
#include "support/root.h"

namespace envdoctor::python {

struct PythonVersionInfo {
  int major = 0, minor = 0, micro = 0;
  std::string releaselevel = "final";
  int serial = 0;
  // "3.11" and "3.11.7".
  std::string short_str() const { return std::to_string(major) + "." + std::to_string(minor); }
  std::string full_str() const;
};

// sysconfig.get_paths() of the default scheme.
struct SysconfigPaths {
  std::string purelib, platlib, stdlib, platstdlib, scripts, data, include;
};

struct PythonEnvironment {
  std::string executable;       // sys.executable (or the path run)
  std::string real_executable;  // os.path.realpath(sys.executable)
  // The file a process of this interpreter runs, the one choice every model of it makes: the
  // real executable, so that its $ORIGIN and name are the installed file's and not those of a
  // venv's link to it; else sys.executable; "" when no interpreter was found.
  const std::string& program() const { return real_executable.empty() ? executable : real_executable; }
  PythonVersionInfo version_info;
  std::string prefix, base_prefix, exec_prefix;
  std::vector<std::string> sys_path;  // as reported; "" is the current directory
  SysconfigPaths paths;
  // libpython: sysconfig's LIBDIR, LDLIBRARY ("libpython3.11.so" or the static ".a") and
  // INSTSONAME ("libpython3.11.so.1.0").
  std::string libdir, ldlibrary, instsoname;
  bool py_enable_shared = false;   // Py_ENABLE_SHARED: the executable links libpython
  std::string ext_suffix;          // ".cpython-311-x86_64-linux-gnu.so"
  std::string soabi;               // "cpython-311-x86_64-linux-gnu"
  std::string sys_platform;        // "linux"
  std::string machine;             // platform.machine(): "x86_64"
  std::string sysconfig_platform;  // sysconfig.get_platform(): "linux-x86_64"
  std::string glibc_version;       // "2.36"; "" when the C library is not glibc
  std::string implementation;      // sys.implementation.name: "cpython"
  // For packaging.tags: Py_DEBUG, WITH_PYMALLOC, Py_GIL_DISABLED and a 32-bit interpreter.
  bool py_debug = false, with_pymalloc = false, gil_disabled = false, is_32bit = false;
  MarkerEnvironment markers;

  // What site.py would have run at the interpreter's start and envdoctor did not: .pth "import"
  // lines, sitecustomize, usercustomize (site_layout.h). Their effect on sys.path and on imports
  // is not in the model, but for what is read as data instead: an editable install's finder
  // (editable.h), setuptools' distutils shim and Debian's own sitecustomize (apport's exception
  // hook), which the report's note leaves out.
  std::vector<SiteCode> site_code_not_run;

  bool executed = false;  // false: read from pyvenv.cfg and the layout (--prefix)
  // pyvenv.cfg, when there is one.
  std::string pyvenv_home;
  bool include_system_site_packages = false;

  bool in_venv() const { return prefix != base_prefix; }
  // The directories to scan for distributions: the sys.path entries that are directories,
  // made absolute, in sys.path order, without duplicates.
  std::vector<std::string> site_dirs() const;
};

struct DiscoverOptions {
  std::string python;  // --python; "" for the default order
  std::chrono::milliseconds timeout{20000};
};

// The interpreter to examine when none is named: $ENVDOCTOR_PYTHON (which `python -m envdoctor`
// sets to sys.executable); the environment this binary is installed in (installed_environment_python
// of /proc/self/exe); then the one a user would run: $VIRTUAL_ENV/bin/python,
// $CONDA_PREFIX/bin/python, `python3` on PATH. nullopt with `error` set when none exists.
std::optional<std::string> default_python(std::string* error);

// Every executable file `name` in the directories of $PATH, in PATH's order (the first is what
// execvp runs).
std::vector<std::string> find_on_path(const std::string& name);

// ENV/bin/python when `executable` lies in ENV/bin of a virtual environment (ENV/pyvenv.cfg) or
// a conda environment (ENV/conda-meta/); nullopt otherwise.
std::optional<std::string> installed_environment_python(const std::string& executable);

// Runs the interpreter once and parses what it prints.
std::optional<PythonEnvironment> discover_interpreter(const DiscoverOptions& options, std::string* error);

// Parses the probe's JSON output (exposed for tests).
std::optional<PythonEnvironment> parse_probe_output(const std::string& json, std::string* error);

// The probe script itself.
const std::string& probe_script();

using support::FileRoot;

// The no-exec path for --prefix DIR. Under a root, `prefix` is the container's own absolute
// path and so is every path of the result; the files are read below the root.
std::optional<PythonEnvironment> environment_from_prefix(const std::string& prefix, std::string* error,
                                                         const FileRoot& root = {});

}  // namespace envdoctor::python
