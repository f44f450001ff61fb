// scripts/test-summary.py, the last lines of `make test`: the counts, the skips with their reasons,
// and the time each area of the suite took (tests/AREA), the slowest first, from ctest's JUnit.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"

namespace envdoctor::test {
namespace {

TEST(TestSummary, CountsSkipsAndTimeByArea) {
  TempDir tmp;
  // Two suites this tree defines (tests/cuda's FatbinToolkit, tests/environment's PackageRules, the
  // latter parameterized by name), one it does not, and a skip with its reason.
  std::string junit = tmp.write("junit.xml", R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="4" failures="1" skipped="1">
  <testcase name="FatbinToolkit.A" classname="FatbinToolkit.A" time="1.5" status="run"/>
  <testcase name="Some/PackageRules.B/x" classname="Some/PackageRules.B/x" time="4.25" status="fail">
    <failure message="Failed"/>
  </testcase>
  <testcase name="Layering.Self" classname="Layering.Self" time="0.5" status="run"/>
  <testcase name="FatbinToolkit.C" classname="FatbinToolkit.C" time="0" status="notrun">
    <skipped message="skipped"/>
    <system-out>x.cc:1: Skipped
cuobjdump not installed
[  SKIPPED ] FatbinToolkit.C (0 ms)</system-out>
  </testcase>
</testsuite>
)xml");
  CommandResult r =
      run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/scripts/test-summary.py") + " " + quote(junit));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4 tests: 3 ran, 1 failed, 1 skipped\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  skipped 1: cuobjdump not installed (FatbinToolkit.C)\n"), std::string::npos) << r.out;
  size_t environment = r.out.find("  environment         4.2 s\n"), cuda = r.out.find("  cuda                1.5 s\n"),
         other = r.out.find("  other               0.5 s\n");
  ASSERT_NE(environment, std::string::npos) << r.out;
  ASSERT_NE(cuda, std::string::npos) << r.out;
  ASSERT_NE(other, std::string::npos) << r.out;
  EXPECT_LT(environment, cuda) << r.out;  // the slowest first
  EXPECT_LT(cuda, other) << r.out;
}

}  // namespace
}  // namespace envdoctor::test
