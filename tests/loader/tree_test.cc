// `envdoctor tree`: each library with the rule and directory that found it, and for a library
// not found, the paths considered in order. The referee for that order is glibc itself:
// `LD_DEBUG=libs` prints every file ld.so tries ("trying file=...") and when it asks its cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "loader/search_paths.h"

#include "fixtures/fixture.h"
#include "fixtures/loader_referee.h"

namespace envdoctor::test {
namespace {

// The files ld.so tried for `name`, in order, as LD_DEBUG=libs reports them, leaving out the
// glibc-hwcaps and legacy subdirectory probes (tree lists those only when such a file exists),
// and whether it asked the cache.
std::vector<std::string> ld_so_tried(const std::string& debug, const std::string& name, bool* asked_cache) {
  std::vector<std::string> out;
  const std::vector<std::string> subdirs = loader::LoaderConfig::for_host().subdirs;
  std::istringstream in(debug);
  bool inside = false;
  *asked_cache = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("find library=") != std::string::npos)
      inside = line.find("find library=" + name + " ") != std::string::npos;
    if (!inside) continue;
    if (line.find("search cache=") != std::string::npos) *asked_cache = true;
    size_t at = line.find("trying file=");
    if (at == std::string::npos) continue;
    std::string path = line.substr(at + 12);
    // The subdirectories this CPU makes ld.so try ("haswell/avx512_1" on some Intel CPUs).
    std::string dir = path.substr(0, path.rfind('/'));
    bool probe = std::any_of(subdirs.begin(), subdirs.end(), [&](const std::string& sub) {
      return dir.size() > sub.size() && dir.compare(dir.size() - sub.size(), sub.size(), sub) == 0 &&
             dir[dir.size() - sub.size() - 1] == '/';
    });
    if (!probe) out.push_back(path);
  }
  return out;
}

TEST(Tree, RulesAndThePathsConsideredAsLdSoTriesThem) {
  if (!have_tool("gcc") || access(kLdSo, X_OK) != 0) GTEST_SKIP() << "needs gcc and " << kLdSo;
  TempDir tmp;
  build_shared(tmp / "d/libdep.so", "int dep(void){return 1;}", "-nostdlib -Wl,-soname,libdep.so", tmp);
  build_shared(tmp / "gone/libgone.so", "int gone(void){return 1;}", "-nostdlib -Wl,-soname,libgone.so", tmp);
  std::string top = tmp / "libtop.so";
  build_shared(
      top, "int dep(void); int gone(void); int top(void){return dep()+gone();}",
      "-nostdlib -L" + tmp / "d" + " -ldep -L" + tmp / "gone" + " -lgone -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/d'",
      tmp);
  fs::remove_all(tmp / "gone");

  CommandResult tree = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " tree " + quote(top));
  EXPECT_EQ(tree.status, 1);
  std::istringstream lines(tree.out);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_GE(got.size(), 5u) << tree.out;
  EXPECT_EQ(got[0], top);
  EXPECT_EQ(got[1], "├── libdep.so => " + tmp / "d/libdep.so" + " [RUNPATH " + tmp.path().string() + "/d]");
  EXPECT_EQ(got[2], "└── libgone.so => not found");
  EXPECT_EQ(got[3], "    Paths considered in this order:");

  CommandResult debug =
      run("env -u LD_LIBRARY_PATH LD_DEBUG=libs LD_TRACE_LOADED_OBJECTS=1 " + std::string(kLdSo) + " " + quote(top));
  EXPECT_NE(debug.out.find("libgone.so => not found"), std::string::npos) << debug.out;
  bool asked_cache = false;
  std::vector<std::string> tried = ld_so_tried(debug.err, "libgone.so", &asked_cache);
  ASSERT_FALSE(tried.empty()) << debug.err;
  std::vector<std::string> considered;
  bool said_cache = false;
  for (size_t i = 4; i < got.size(); ++i) {
    std::string entry = got[i].substr(6);  // after the indentation
    if (entry.rfind("/etc/ld.so.cache: ", 0) == 0) {
      said_cache = true;
      continue;
    }
    considered.push_back(entry.substr(0, entry.find(": ")));
  }
  EXPECT_EQ(considered, tried);
  EXPECT_EQ(said_cache, asked_cache);
}

// Issue 26: an empty RUNPATH element (`$ORIGIN/d:`, a trailing colon) was shown as nothing at all.
// glibc keeps it as "" (elf/dl-load.c, fillin_rpath), and ld.so opens its candidates relative to
// the current working directory, glibc-hwcaps and legacy subdirectories first: tree says so and
// lists every one of them, as LD_DEBUG=libs shows them tried; and where the directory holds the
// library, ld.so loads it from there, as tree says.
TEST(Tree, EmptyRunpathElementIsTheCurrentDirectoryWithItsSubdirectories) {
  if (!have_tool("gcc") || access(kLdSo, X_OK) != 0) GTEST_SKIP() << "needs gcc and " << kLdSo;
  TempDir tmp;
  build_shared(tmp / "gone/libgone.so", "int gone(void){return 1;}", "-nostdlib -Wl,-soname,libgone.so", tmp);
  std::string top = tmp / "libtop.so";
  build_shared(top, "int gone(void); int top(void){return gone();}",
               "-nostdlib -L" + tmp / "gone" + " -lgone -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/d:'", tmp);
  fs::create_directories(tmp / "cwd");
  std::string in_cwd = "cd " + quote(tmp / "cwd") + " && env -u LD_LIBRARY_PATH ";

  CommandResult tree = run(in_cwd + quote(envdoctor()) + " tree " + quote(top));
  EXPECT_EQ(tree.status, 1);
  const std::string header = "      the current directory (empty RUNPATH element), as ld.so tries it:";
  std::istringstream lines(tree.out);
  std::vector<std::string> listed;
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == header) inside = true;
    else if (inside && line.rfind("        ", 0) == 0) listed.push_back(line.substr(8, line.find(": ") - 8));
    else inside = false;
  }
  CommandResult debug = run(in_cwd + "LD_DEBUG=libs LD_TRACE_LOADED_OBJECTS=1 " + kLdSo + " " + quote(top));
  std::vector<std::string> relative;  // what ld.so tried in the current directory
  std::istringstream in(debug.err);
  for (std::string line; std::getline(in, line);)
    if (size_t at = line.find("trying file="); at != std::string::npos && line[at + 12] != '/')
      relative.push_back(line.substr(at + 12));
  ASSERT_FALSE(relative.empty()) << debug.err;
  EXPECT_EQ(relative.back(), "libgone.so");
  EXPECT_EQ(listed, relative) << tree.out;

  // The library in the current directory is the one ld.so loads, and tree says where it came from.
  fs::copy_file(tmp / "gone/libgone.so", tmp / "cwd/libgone.so");
  CommandResult listing = run(in_cwd + "LD_TRACE_LOADED_OBJECTS=1 " + kLdSo + " " + quote(top));
  EXPECT_EQ(strip_addresses(listing.out), "\tlibgone.so\n");
  CommandResult found = run(in_cwd + quote(envdoctor()) + " tree " + quote(top));
  EXPECT_EQ(found.out, top + "\n└── libgone.so [RUNPATH the current directory (empty RUNPATH element)]\n");
  EXPECT_EQ(found.status, 0) << found.err;
}

// A library of the consumer's own build (libggml-base.so for libggml-cuda.so) not found where the
// consumer's RUNPATH $ORIGIN looks: tree says to put it there, and done, ld.so finds it there; a
// library of another family missing the same way gets no such hint.
TEST(Tree, MissingSiblingBelongsBesideItsConsumer) {
  if (!have_tool("gcc") || access(kLdSo, X_OK) != 0) GTEST_SKIP() << "needs gcc and " << kLdSo;
  TempDir tmp;
  build_shared(tmp / "build/libggml-base.so", "int base(void){return 1;}", "-nostdlib -Wl,-soname,libggml-base.so",
               tmp);
  build_shared(tmp / "build/libzlibish.so.1", "int other(void){return 1;}", "-nostdlib -Wl,-soname,libzlibish.so.1",
               tmp);
  std::string cuda = tmp / "lib/libggml-cuda.so";
  build_shared(
      cuda, "int base(void); int other(void); int cuda(void){return base()+other();}",
      "-nostdlib -L" + tmp / "build" + " -lggml-base -l:libzlibish.so.1 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN'",
      tmp);
  CommandResult tree = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " tree " + quote(cuda));
  EXPECT_EQ(tree.status, 1);
  // The cause first: the line right below the library not found.
  const std::string hint =
      "hint: libggml-base.so is of libggml-cuda.so's own build (libggml*), and libggml-cuda.so's "
      "RUNPATH $ORIGIN looks for it beside it: put libggml-base.so in " +
      tmp / "lib" + "\n";
  size_t missing = tree.out.find("libggml-base.so => not found\n");
  ASSERT_NE(missing, std::string::npos) << tree.out;
  size_t next = tree.out.find('\n', missing) + 1;
  EXPECT_EQ(tree.out.find(hint, next), next + std::string("│   ").size()) << tree.out;
  EXPECT_NE(tree.out.find("libzlibish.so.1 => not found"), std::string::npos) << tree.out;
  EXPECT_EQ(tree.out.find("hint: libzlibish.so.1"), std::string::npos) << tree.out;

  fs::copy_file(tmp / "build/libggml-base.so", tmp / "lib/libggml-base.so");
  CommandResult listing =
      run("env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 " + std::string(kLdSo) + " " + quote(cuda));
  EXPECT_NE(strip_addresses(listing.out).find("libggml-base.so => " + tmp / "lib/libggml-base.so"), std::string::npos)
      << listing.out;
  CommandResult after = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " tree " + quote(cuda));
  EXPECT_NE(after.out.find("libggml-base.so => " + tmp / "lib/libggml-base.so [RUNPATH " + tmp / "lib]"),
            std::string::npos)
      << after.out;
  EXPECT_EQ(after.out.find("hint:"), std::string::npos) << after.out;
}

}  // namespace
}  // namespace envdoctor::test
