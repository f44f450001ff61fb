// support::run_process: no shell between envdoctor and the program, bounded output, a time limit.
#include "support/subprocess.h"

#include <gtest/gtest.h>

#include "fixtures/fixture.h"

namespace envdoctor::support {
namespace {

using namespace std::chrono_literals;

TEST(RunProcess, PassesArgumentsAsTheyAreWithoutAShell) {
  std::string error;
  // A shell would expand $HOME and run the second command.
  auto r = run_process({"/bin/echo", "$HOME; echo pwned", "'x'"}, 5s, 1 << 20, &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, 0);
  EXPECT_EQ(r->out, "$HOME; echo pwned 'x'\n");
}

// The interpreter's probe goes on stdin: all of it arrives, even past a pipe's 64 KiB while the
// child writes as much back; a child that never reads it exits without a SIGPIPE for envdoctor.
TEST(RunProcess, WritesInputToStdinAndSurvivesAChildThatIgnoresIt) {
  std::string error;
  std::string big(300000, 'x');
  auto r = run_process({"cat"}, 5s, 1 << 20, &error, big);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, 0);
  EXPECT_EQ(r->out, big);
  r = run_process({"true"}, 5s, 1 << 20, &error, big);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, 0);
  r = run_process({"sh", "-c", "cat >/dev/null; echo done"}, 5s, 1 << 20, &error);  // no input: /dev/null
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->out, "done\n");
}

TEST(RunProcess, KeepsStdoutAndStderrApartAndReturnsTheStatus) {
  std::string error;
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 7"}, 5s, 1 << 20, &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, 7);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(RunProcess, ASignalIs128PlusItsNumber) {
  std::string error;
  auto r = run_process({"sh", "-c", "kill -9 $$"}, 5s, 1 << 20, &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->status, 128 + 9);
}

TEST(RunProcess, AHangingProgramIsKilledAtItsTimeLimit) {
  std::string error;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(run_process({"sleep", "30"}, 300ms, 1 << 20, &error));
  EXPECT_EQ(error, "sleep did not finish within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(RunProcess, TooMuchOutputIsAnError) {
  std::string error;
  EXPECT_FALSE(run_process({"sh", "-c", "yes | head -c 100000"}, 5s, 1000, &error));
  EXPECT_EQ(error, "sh wrote more than 1000 bytes");
}

TEST(RunProcess, AMissingProgramIsAnError) {
  std::string error;
  EXPECT_FALSE(run_process({"/nonexistent/program"}, 5s, 1000, &error));
  EXPECT_EQ(error, "cannot run /nonexistent/program: No such file or directory");
}

}  // namespace
}  // namespace envdoctor::support
