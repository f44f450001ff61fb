// support::FileRoot: a container's paths read below its root, links followed as a chroot would.
#include "support/root.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "fixtures/fixture.h"

namespace envdoctor::support {
namespace {

TEST(FileRoot, AnAbsoluteLinkRestartsAtTheRoot) {
  test::TempDir tmp;
  tmp.write("usr/lib/libx.so.1", "x");
  std::filesystem::create_directories(tmp.path() / "lib");
  ASSERT_EQ(::symlink("/usr/lib/libx.so.1", (tmp.path() / "lib/libx.so.1").c_str()), 0);
  FileRoot root(tmp.path().string() + "/");
  EXPECT_EQ(root.dir(), tmp.path().string());
  EXPECT_EQ(root.host("/lib/libx.so.1"), tmp / "usr/lib/libx.so.1");
  EXPECT_EQ(root.host_no_follow("/lib/libx.so.1"), tmp / "lib/libx.so.1");
  EXPECT_EQ(root.canonical("/lib/libx.so.1"), "/usr/lib/libx.so.1");
  // ".." cannot climb out of the root.
  EXPECT_EQ(root.host("/../../usr/lib/libx.so.1"), tmp / "usr/lib/libx.so.1");
}

TEST(FileRoot, APathBelowTheRootOnThisMachineIsTakenAsTheContainersOwn) {
  test::TempDir tmp;
  FileRoot root(tmp.path().string());
  EXPECT_EQ(root.inside(tmp / "opt/venv"), "/opt/venv");
  EXPECT_EQ(root.inside("/opt/venv"), "/opt/venv");
  EXPECT_EQ(root.strip("/elsewhere"), "");
}

TEST(FileRoot, NoRootIsThisMachine) {
  for (const FileRoot& root : {FileRoot(), FileRoot(""), FileRoot("/")}) {
    EXPECT_TRUE(root.empty());
    EXPECT_EQ(root.host("/usr/lib"), "/usr/lib");
    EXPECT_EQ(root.inside("/usr/lib"), "/usr/lib");
  }
}

}  // namespace
}  // namespace envdoctor::support
