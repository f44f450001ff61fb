// loader::ldconfig_print, the lines of `ldconfig -p` that a package rule's ldconfig places and
// conditions read, against ldconfig itself.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "fixtures/fixture.h"
#include "loader/ldconfig_print.h"
#include "loader/search_paths.h"

namespace envdoctor::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    out.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

// The lines of `ldconfig -p` that the ldconfig places and conditions read (loader/ldconfig_print.h),
// compared with what ldconfig itself prints: for this machine's cache, and in a chroot to a root
// whose cache holds an entry of a glibc-hwcaps subdirectory beside a plain one; no cache, no lines.
TEST(LdconfigPrint, IsWhatLdconfigPrints) {
  if (!have_tool("ldconfig")) GTEST_SKIP() << "needs ldconfig";
  CommandResult host = run("ldconfig -p");
  ASSERT_EQ(host.status, 0) << host.err;
  std::optional<std::vector<std::string>> model = loader::ldconfig_print(loader::LoaderConfig::for_host());
  ASSERT_TRUE(model);
  EXPECT_EQ(*model, lines_of(host.out));

  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc")) GTEST_SKIP() << "needs root, chroot and gcc";
  TempDir tmp;
  std::string root = tmp / "root", lib = root + "/usr/lib/x86_64-linux-gnu";
  fs::create_directories(root + "/etc");
  fs::create_directories(root + "/sbin");
  fs::copy_file("/sbin/ldconfig", root + "/sbin/ldconfig");
  build_shared(lib + "/libplain.so.1", "int plain(void) { return 1; }", "-Wl,-soname,libplain.so.1", tmp);
  build_shared(lib + "/glibc-hwcaps/x86-64-v2/libplain.so.1", "int plain(void) { return 2; }",
               "-Wl,-soname,libplain.so.1", tmp);
  std::ofstream(root + "/etc/ld.so.conf") << "/usr/lib/x86_64-linux-gnu\n";
  EXPECT_FALSE(loader::ldconfig_print(loader::LoaderConfig::for_host(root)));
  CommandResult none = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.out, "");
  // An empty cache file: no entries, and no error.
  std::ofstream(root + "/etc/ld.so.cache").close();
  CommandResult empty = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_EQ(empty.out, "");
  std::optional<std::vector<std::string>> no_lines = loader::ldconfig_print(loader::LoaderConfig::for_host(root));
  ASSERT_TRUE(no_lines);
  EXPECT_TRUE(no_lines->empty());
  ASSERT_EQ(run("ldconfig -r " + quote(root)).status, 0);
  CommandResult chrooted = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  ASSERT_EQ(chrooted.status, 0) << chrooted.err;
  EXPECT_NE(chrooted.out.find("hwcap: \"x86-64-v2\""), std::string::npos) << chrooted.out;
  model = loader::ldconfig_print(loader::LoaderConfig::for_host(root));
  ASSERT_TRUE(model);
  EXPECT_EQ(*model, lines_of(chrooted.out));
}

}  // namespace
}  // namespace envdoctor::test
