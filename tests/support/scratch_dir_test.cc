// support::ScratchDir: the private directory that the pip and uv plans download and lay out in.
#include "support/scratch_dir.h"

#include <gtest/gtest.h>

#include <fstream>

namespace envdoctor::support {
namespace {

namespace fs = std::filesystem;

// A scratch directory is private (mode 0700, mkdtemp's) and goes, with what was written in it,
// when its last owner does.
TEST(ScratchDir, IsPrivateAndRemovedWithEverythingInIt) {
  std::string error;
  fs::path path;
  {
    std::shared_ptr<ScratchDir> dir = ScratchDir::create("envdoctor-test-scratch-", &error);
    ASSERT_TRUE(dir) << error;
    path = dir->path();
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_all);
    EXPECT_EQ(path.filename().string().rfind("envdoctor-test-scratch-", 0), 0u);
    fs::create_directories(path / "a/b");
    std::ofstream(path / "a/b/file") << "x";
    std::shared_ptr<ScratchDir> second_owner = dir;
    dir.reset();
    EXPECT_TRUE(fs::exists(path / "a/b/file"));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace envdoctor::support
