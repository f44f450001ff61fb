// OwnershipIndex's questions against the answers std::filesystem gives the slow way: the rows that
// list a file name, and a path's canonical form through linked directories and files.
#include "python/ownership.h"

#include <gtest/gtest.h>

#include "fixtures/fixture.h"

namespace envdoctor::python {
namespace {

using test::TempDir;

Distribution listing(const std::string& name, const std::vector<std::string>& paths) {
  Distribution d;
  d.name = name;
  for (const std::string& p : paths) {
    RecordEntry e;
    e.path = p;
    e.resolved = lexically_resolve("/site", p);
    d.record.push_back(std::move(e));
  }
  return d;
}

TEST(Ownership, ListedAsIsTheRecordsRowsOfThatNameInOrder) {
  std::vector<Distribution> dists = {
      listing("a", {"a/libx.so.1", "a/liby.so.1", "a/b/libx.so.1", "../../bin/libx.so.1"}),
      listing("b", {"b/notlibx.so.1", "b/libx.so.1.2", "b/libx.so.1"}),
      listing("c", {}),
  };
  OwnershipIndex index(dists);
  // The slow way, as advice asked it before: fs::path's filename() against the name.
  for (const char* name : {"libx.so.1", "liby.so.1", "libx.so", "", "a/libx.so.1", "/libx.so.1", "..", "b"}) {
    std::vector<std::pair<const Distribution*, const RecordEntry*>> expected, got;
    for (const Distribution& d : dists)
      for (const RecordEntry& e : d.record)
        if (e.resolved.filename() == fs::path(name)) expected.emplace_back(&d, &e);
    for (const OwnershipIndex::Listing& l : index.listed_as(name)) got.emplace_back(l.dist, l.entry);
    EXPECT_EQ(got, expected) << name;
  }
  ASSERT_EQ(index.listed_as("libx.so.1").size(), 4u);
  EXPECT_EQ(index.listed_as("libx.so.1")[3].dist->name, "b");
  EXPECT_EQ(index.listed_as("libx.so.1")[2].entry->path, "../../bin/libx.so.1");
}

TEST(Ownership, NamedReadsTheFileNameAsFilesystemDoes) {
  for (const char* path : {"/a/b", "/a/b/", "/", "a", "", "/a//b", "a/.", "/a/..", "/a/b.so.1"})
    for (const char* name : {"b", "", "a", ".", "..", "b.so.1", "a/b", "/b", "b/"})
      EXPECT_EQ(named(path, name), fs::path(path).filename() == fs::path(name)) << path << " " << name;
}

TEST(Ownership, CanonicalIsWeaklyCanonical) {
  TempDir tmp;
  std::string root = tmp.path().string();
  tmp.write("real/lib/libx.so.1", "x");
  tmp.write("real/lib/sub/liby.so.1", "y");
  fs::create_directory_symlink("real/lib", tmp.path() / "lib64");         // a linked directory
  fs::create_directory_symlink(root + "/real", tmp.path() / "abs");       // linked by absolute path
  fs::create_symlink("libx.so.1", tmp.path() / "real/lib/libx.so");       // a linked file
  fs::create_symlink("../nowhere", tmp.path() / "real/lib/dangling.so");  // a link to nothing
  fs::create_symlink("libx.so.1", tmp.path() / "real/lib/sub/loop");
  std::vector<Distribution> none;
  OwnershipIndex index(none);
  for (std::string rel :
       {"lib64/libx.so.1", "lib64/libx.so", "lib64/sub/liby.so.1", "abs/lib/libx.so", "lib64/missing",
        "lib64/missing/deeper/file", "nowhere/at/all", "lib64/dangling.so", "lib64/../lib64/libx.so",
        "lib64/./libx.so.1", "lib64/", "lib64//libx.so.1", "lib64/libx.so.1/under", "lib64/sub/loop", "real/lib/sub"}) {
    std::string path = root + "/" + rel;
    std::error_code ec;
    fs::path expected = fs::weakly_canonical(path, ec);
    // Twice: the second answer comes from what the first resolved.
    EXPECT_EQ(index.canonical(path), ec ? path : expected.string()) << rel;
    EXPECT_EQ(index.canonical(path), ec ? path : expected.string()) << rel;
  }
  EXPECT_EQ(index.canonical("/"), "/");
  std::error_code ec;
  EXPECT_EQ(index.canonical("relative/path"), fs::weakly_canonical("relative/path", ec).string());
}

}  // namespace
}  // namespace envdoctor::python
