// DpkgIndex against Debian's own answer (`dpkg -S`), and on a database laid out by hand.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "python/dpkg.h"

namespace envdoctor::test {
namespace {

TEST(Dpkg, AgreesWithDpkgSearchOnThisMachine) {
  if (!have_tool("dpkg") || !fs::exists("/var/lib/dpkg/status")) GTEST_SKIP() << "not a Debian system";
  python::DpkgIndex index;
  for (const char* path : {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    if (!fs::exists(path)) continue;
    CommandResult r =
        run(std::string("dpkg -S ") + quote(path) + " 2>/dev/null || dpkg -S " +
            quote(std::string(path).rfind("/usr", 0) == 0 ? std::string(path).substr(4) : "/usr" + std::string(path)));
    ASSERT_EQ(r.status, 0) << path;
    std::string expected = r.out.substr(0, r.out.find_first_of(":,"));
    auto owner = index.owner(path);
    ASSERT_TRUE(owner) << path;
    EXPECT_EQ(owner->name, expected) << path;
    EXPECT_FALSE(owner->version.empty());
  }
  EXPECT_FALSE(index.owner("/opt/nothing/libnothing.so.1"));
}

TEST(Dpkg, ReadsARootsDatabase) {
  TempDir root;
  root.write("var/lib/dpkg/info/libfoo1:amd64.list",
             "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libfoo.so.1\n/usr/share/doc/x\n");
  root.write("var/lib/dpkg/status",
             "Package: libfoo1\nStatus: install ok installed\nVersion: 1.2-3\n\n"
             "Package: other\nVersion: 9\n\n");
  python::DpkgIndex index(root.path().string());
  auto owner = index.owner("/usr/lib/x86_64-linux-gnu/libfoo.so.1");
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->name, "libfoo1");
  EXPECT_EQ(owner->version, "1.2-3");
  // The merged-/usr spelling of the same file.
  EXPECT_TRUE(index.owner("/lib/x86_64-linux-gnu/libfoo.so.1"));
  // Every listed path has its owner, as `dpkg -S` says; an unlisted one has none.
  ASSERT_TRUE(index.owner("/usr/share/doc/x"));
  EXPECT_EQ(index.owner("/usr/share/doc/x")->name, "libfoo1");
  EXPECT_FALSE(index.owner("/usr/share/doc/y"));
}

// Who ships a file of that name: every list's lines that end in "/NAME", in each list's order.
TEST(Dpkg, FilesNamedAreTheListsLinesOfThatName) {
  TempDir root;
  root.write("var/lib/dpkg/info/libfoo1:amd64.list",
             "/.\n/usr\n/usr/lib/libfoo.so.1\n/usr/lib/x/notlibfoo.so.1\nlibfoo.so.1\n/opt/libfoo.so.1\n"
             "/usr/lib/libfoo.so.1.2\n/usr/lib/libfoo.so.1/\n");
  root.write("var/lib/dpkg/status", "Package: libfoo1\nVersion: 1.2-3\n\n");
  python::DpkgIndex index(root.path().string());
  auto named = index.files_named("libfoo.so.1");
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "/usr/lib/libfoo.so.1");
  EXPECT_EQ(named[1].first, "/opt/libfoo.so.1");
  EXPECT_EQ(named[0].second.name, "libfoo1");
  EXPECT_EQ(named[0].second.version, "1.2-3");
  auto again = index.files_named("libfoo.so.1");  // the second answer is the first's
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].first, "/opt/libfoo.so.1");
  EXPECT_EQ(index.files_named(".").size(), 1u);  // "/."
  EXPECT_EQ(index.files_named("usr").size(), 1u);
  EXPECT_TRUE(index.files_named("").empty());
  EXPECT_TRUE(index.files_named("lib/libfoo.so.1").empty());
  EXPECT_TRUE(index.files_named("libbar.so.1").empty());
}

// The same against grep over this machine's lists: the same lines, as many times.
TEST(Dpkg, FilesNamedAgreesWithGrepOnThisMachine) {
  if (!fs::exists("/var/lib/dpkg/info")) GTEST_SKIP() << "not a Debian system";
  python::DpkgIndex index;
  for (const char* name : {"libc.so.6", "libstdc++.so.6", "copyright", "python3"}) {
    CommandResult r = run(std::string("cat /var/lib/dpkg/info/*.list | grep -c '/") + name + "$'");
    EXPECT_EQ(std::to_string(index.files_named(name).size()) + "\n", r.out) << name;
  }
}

// PKG.md5sums lists what dpkg installed; a file another package diverted lives where it was moved.
TEST(Dpkg, FilesFromMd5sumsWithDiversions) {
  TempDir root;
  root.write("var/lib/dpkg/info/python3-foo.list", "/usr/lib/python3/dist-packages/foo/a.so\n/usr/bin/foo\n");
  root.write("var/lib/dpkg/info/python3-foo.md5sums",
             "0123456789abcdef0123456789abcdef  usr/lib/python3/dist-packages/foo/a.so\n"
             "fedcba9876543210fedcba9876543210  usr/bin/foo\nnot a line\n");
  root.write("var/lib/dpkg/diversions", "/usr/bin/foo\n/usr/bin/foo.real\nother-package\n");
  root.write("var/lib/dpkg/status", "Package: python3-foo\nVersion: 1.0-1\n\n");
  python::DpkgIndex index(root.path().string());
  EXPECT_FALSE(index.loaded());
  auto files = index.files("python3-foo");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "/usr/lib/python3/dist-packages/foo/a.so");
  EXPECT_EQ(files[0].md5, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(files[1].path, "/usr/bin/foo.real");
  EXPECT_TRUE(index.loaded());
  EXPECT_TRUE(index.files("absent").empty());
}

}  // namespace
}  // namespace envdoctor::test
