// Fixture builders shared by the tests: a temporary directory that removes itself, a way to
// run a command and capture what it says, and gcc/nvcc wrappers that build real objects.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace envdoctor::test {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh, capturing stdout and stderr separately.
CommandResult run(const std::string& command);

// Single-quotes `s` for the shell.
std::string quote(const std::string& s);

bool have_tool(const std::string& name);

// The bytes of the file at `p` ("" when it cannot be read).
std::string slurp(const fs::path& p);

// How many times `what` occurs in `text`, not overlapping.
size_t count(const std::string& text, const std::string& what);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  // `path`, created if it is missing and left in place when the object goes: a directory that
  // something else removes (a shared fixture's, support/shared_fixture.h).
  static std::unique_ptr<TempDir> kept(const fs::path& path);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }
  // Writes `text` to `rel` (creating parent directories) and returns the absolute path.
  std::string write(const std::string& rel, const std::string& text) const;

 private:
  struct Kept {};
  TempDir(const fs::path& path, Kept);
  fs::path path_;
  bool remove_ = true;
};

// Builds a shared library from C source with gcc. `flags` go on the command line as they are
// (e.g. "-Wl,-soname,libfoo.so.1 -L dir -lbar"). Fails the test on a compile error.
void build_shared(const std::string& output, const std::string& c_source, const std::string& flags, const TempDir& tmp);
// The same from C++ source with g++ (`-D_GLIBCXX_USE_CXX11_ABI=0` in `flags` for the old ABI).
void build_shared_cxx(const std::string& output, const std::string& cxx_source, const std::string& flags,
                      const TempDir& tmp);
void build_executable(const std::string& output, const std::string& c_source, const std::string& flags,
                      const TempDir& tmp);

// The envdoctor binary built alongside the tests.
std::string envdoctor();

}  // namespace envdoctor::test
