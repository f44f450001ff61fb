// The sentences of hints: wrapping for a terminal never breaks a quoted command, and a slip of the
// keyboard finds the name that was meant.
#include <gtest/gtest.h>

#include "support/text.h"

namespace envdoctor::test {
namespace {

using support::did_you_mean;
using support::wrap;

TEST(Wrap, BreaksAtSpacesWithinTheWidth) {
  EXPECT_EQ(wrap("aaa bbb ccc ddd", 7, "  "), "aaa bbb\n  ccc ddd");
  EXPECT_EQ(wrap("short", 80, "  "), "short");
  EXPECT_EQ(wrap("averyveryverylongword x", 5, ""), "averyveryverylongword\nx");
}

// Issue 26, item 7d: `envdoctor check --python V --with WHEEL` was broken after "--with".
TEST(Wrap, NeverBreaksACommandInBackticks) {
  std::string text = "either upgrade it (test a wheel with `envdoctor check --python /v/bin/python --with WHEEL`) now";
  std::string out = wrap(text, 40, "    ");
  EXPECT_NE(out.find("`envdoctor check --python /v/bin/python --with WHEEL`)"), std::string::npos) << out;
  for (size_t at = out.find('`'); at != std::string::npos; at = out.find('`', out.find('`', at + 1) + 1)) {
    size_t close = out.find('`', at + 1);
    ASSERT_NE(close, std::string::npos) << out;
    EXPECT_EQ(out.substr(at, close - at).find('\n'), std::string::npos) << out;
  }
  // Two quoted commands on one line, and an unclosed quote running to the end.
  EXPECT_EQ(wrap("`a b` `c d` e", 6, ""), "`a b`\n`c d`\ne");
  EXPECT_EQ(wrap("x `a b c d e", 4, ""), "x\n`a b c d e");
}

TEST(DidYouMean, OneOrTwoSlipsOfTheKeyboard) {
  std::vector<std::string> commands = {"check", "pip", "ps", "snapshot", "diff", "ldd", "tree", "why", "cuda"};
  EXPECT_EQ(did_you_mean("chek", commands), "check");
  EXPECT_EQ(did_you_mean("chekc", commands), "check");  // a swap counts once
  EXPECT_EQ(did_you_mean("snapshto", commands), "snapshot");
  EXPECT_EQ(did_you_mean("check", commands), std::nullopt);  // nothing to correct
  EXPECT_EQ(did_you_mean("frobnicate", commands), std::nullopt);
  EXPECT_EQ(did_you_mean("x", commands), std::nullopt);  // too short to guess from
  EXPECT_EQ(did_you_mean("--pyhton", {"--python", "--prefix"}), "--python");
  EXPECT_EQ(did_you_mean("provlb", {"provlib", "consumer"}), "provlib");
}

}  // namespace
}  // namespace envdoctor::test
