// environment::normalize_path, the spelling every load-graph edge is keyed by: an already normal
// absolute path comes back as it is, anything else as lexically_resolve makes it.
#include <gtest/gtest.h>

#include "environment/environment.h"

namespace envdoctor::environment {
namespace {

TEST(NormalizePath, NormalPathsComeBackAsTheyAre) {
  for (const char* p : {"/", "/usr", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/a/.hidden/b..c/...", "/x/.../y"})
    EXPECT_EQ(normalize_path(p), p);
}

TEST(NormalizePath, EveryOtherSpellingIsResolvedLexically) {
  EXPECT_EQ(normalize_path("/usr//lib"), "/usr/lib");
  EXPECT_EQ(normalize_path("/usr/./lib"), "/usr/lib");
  EXPECT_EQ(normalize_path("/usr/lib/../lib64/x.so"), "/usr/lib64/x.so");
  EXPECT_EQ(normalize_path("/usr/lib/"), "/usr/lib");
  EXPECT_EQ(normalize_path("/usr/lib/."), "/usr/lib");
  EXPECT_EQ(normalize_path("/usr/lib/.."), "/usr");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(normalize_path("//"), "/");
}

}  // namespace
}  // namespace envdoctor::environment
