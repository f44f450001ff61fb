// A root file system in which a real Python runs under chroot: Debian's python3.11 with its
// standard library, /sbin/ldconfig and an ld.so.cache made for the root, and a venv at /opt/venv.
// The referee of a package's own search (a first compile, an import) is that search itself, run by
// the venv's python in a chroot to the root, while envdoctor checks the same root with --root.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/fixture.h"

namespace envdoctor::test {

// A step of building a root or an image; a failure throws, with the command and its output.
void sh(const std::string& command);

// A root with Debian's python3.11: the interpreter, the libraries ldd names, the standard library
// modules an interpreter imports at start, and ld.so.cache made by ldconfig.
void make_python_root(const std::string& root);

// make_python_root, then the whole standard library (functools, subprocess, ctypes) and what
// _ctypes needs, /sbin/ldconfig, /opt/drv in ld.so.conf holding a libcuda.so.1 built by gcc, and
// a venv at /opt/venv. False (with a failure) where it cannot be built.
bool make_chroot_venv_root(const TempDir& tmp, const std::string& root);

// `code` run by the venv's python in a chroot to `root`, with `variables` set.
CommandResult in_root(const std::string& root, const std::string& code, const std::string& variables = "");

// envdoctor's findings about `package` on the venv of `root` (`check --json --root ROOT --prefix
// /opt/venv` and `args`), run under `environment` (env's words: "-u NAME", "NAME=value"), its
// output held to the check schema; the whole report in `report`.
std::vector<nlohmann::json> venv_findings(const std::string& root, const std::string& package,
                                          const std::string& environment, const std::string& args, std::string* report);

// A test in a chroot to such a root: skipped where it cannot be made here (it needs root, chroot,
// gcc and ldconfig), failed where building it fails.
class ChrootVenv : public ::testing::Test {
 protected:
  void SetUp() override;
  TempDir tmp;
  const std::string venv_site = "/opt/venv/lib/python3.11/site-packages";
  std::string root = tmp / "root";
  std::string site = root + venv_site;
};

}  // namespace envdoctor::test
