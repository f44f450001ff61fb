// The main of every test binary: GoogleTest's, with what every test process needs in its
// environment, for itself and the processes it starts.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // No package index is reachable from the machines the suite runs on (Debian's and npm's
  // registries only): pip's five retries of one only delay its failure by 8 s, in every test whose
  // pip or fix reaches for the index.
  ::setenv("PIP_RETRIES", "0", 1);
  // envdoctor's text keeps to COLUMNS (issue 49, 8): the tests read whole messages and notes out
  // of it, so their terminal is as wide as any line; the width tests set COLUMNS themselves.
  ::setenv("COLUMNS", "100000", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
