// A fixture that one ctest run builds once and every test process reads. ctest runs
// each test in a process of its own (gtest_discover_tests), so a suite-wide fixture
// (SetUpTestSuite) was built again for every test: the images of tests/image took 15 s a test.
//
// tests/CMakeLists.txt gives every test ENVDOCTOR_TEST_SHARED, a directory that a FIXTURES_SETUP test empties before
// the run and a FIXTURES_CLEANUP test removes after it, so nothing outlives one run and nothing can be stale. The first
// process to ask builds the fixture there under an exclusive lock (flock); the others wait on the lock and read what
// the builder left. Outside ctest (a binary run by hand) each process builds its own, in a
// temporary directory, as before.
//
// What is built is read by processes running at the same time: a test must never change it (it
// copies what it changes into its own TempDir).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "support/fixture.h"

namespace envdoctor::test {

struct SharedFixture {
  std::unique_ptr<TempDir> dir;  // where it was built; removed at exit only outside ctest
  std::string record;            // what `build` returned: every process gets the builder's words
};

// The fixture `name` (one directory name): built by `build(dir)` once per ctest run, or once per
// process outside ctest. `build` returns a record of what it made (paths, or why it could not),
// which later processes get back as it was. An exception from `build` reaches its caller and
// leaves nothing behind: the next process builds again.
SharedFixture shared_fixture(const std::string& name, const std::function<std::string(const TempDir& dir)>& build);

// What the tests need to know of `python3` on PATH before they build anything with it, asked
// once a ctest run (a fixture as above): most end-to-end tests start by asking, and pip alone
// takes a third of a second to say its version.
struct Python3Facts {
  bool runs = false;       // `python3 -c ...` ran
  bool pip = false;        // `python3 -m pip --version` exits 0
  std::string include;     // sysconfig.get_paths()["include"]
  std::string ext_suffix;  // sysconfig.get_config_var("EXT_SUFFIX")
};
const Python3Facts& python3_facts();

}  // namespace envdoctor::test
