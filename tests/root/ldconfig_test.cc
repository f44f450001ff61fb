// The ldconfig model (loader/ldconfig.h) against the real ldconfig: a root built here with the
// shapes its rules distinguish (a library without its SONAME link, a link pointing at an older
// file, a link not named after its SONAME, configuration includes, comments, `=TYPE` suffixes,
// `hwcap` lines, a directory reached twice, glibc-hwcaps and legacy hwcap subdirectories, 32-bit
// libraries with and without libc, files that are not libraries, a stale link), then `ldconfig -r`
// on a copy of it. The referee is the cache it writes, entry by entry in its order, and the links
// it makes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "fixtures/fixture.h"
#include "loader/ldconfig.h"

namespace envdoctor::test {
namespace {

struct Row {
  std::string key, value, hwcaps;
  i64 flags;
  u64 hwcap;
  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << r.key << " (" << std::hex << r.flags << ", hwcap " << r.hwcap << std::dec << ", \"" << r.hwcaps
            << "\") => " << r.value;
}

std::vector<Row> rows_of(const loader::LdCache& cache) {
  std::vector<Row> rows;
  for (const loader::LdCacheEntry& e : cache.entries()) {
    // A glibc-hwcaps entry's word is the extension bit, the ISA level and the writer's index of
    // the name: only the level is the library's.
    u64 hwcap = e.hwcaps_subdir ? (e.hwcap >> 32) & 0x3ff : e.hwcap;
    rows.push_back(
        {std::string(e.key), std::string(e.value), std::string(e.hwcaps_subdir.value_or("")), e.flags, hwcap});
  }
  return rows;
}

std::vector<Row> rows_of(const loader::LdconfigResult& r) {
  std::vector<Row> rows;
  for (const loader::LdconfigEntry& e : r.entries)
    rows.push_back({e.soname, e.path, e.hwcaps_subdir, e.flags, e.hwcaps_subdir.empty() ? e.hwcap : e.hwcap >> 32});
  return rows;
}

// Every symbolic link below `root`, by in-root path, with its target.
std::map<std::string, std::string> links_below(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_symlink()) out[e.path().string().substr(root.size())] = fs::read_symlink(e.path()).string();
  return out;
}

class LdconfigModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0 || !have_tool("gcc") || !have_tool("ldconfig") || !have_tool("cp"))
      GTEST_SKIP() << "needs root (ldconfig -r chroots), gcc and ldconfig";
    root_ = tmp_ / "root";
    std::string lib = root_ + "/usr/lib/x86_64-linux-gnu", local = root_ + "/usr/local/lib";
    auto so = [&](const std::string& path, const std::string& soname, const std::string& extra = "") {
      build_shared(path, "int f_" + std::to_string(n_++) + "(void) { return 1; }",
                   (soname.empty() ? "" : "-Wl,-soname," + soname + " ") + extra, tmp_);
    };
    so(lib + "/libalpha.so.1.2.3", "libalpha.so.1");            // no SONAME link: ldconfig makes it
    fs::create_symlink("libalpha.so.1", lib + "/libalpha.so");  // the dev link, dangling until then
    so(lib + "/libbeta.so.2.0", "libbeta.so.2");
    so(lib + "/libbeta.so.2.1", "libbeta.so.2");
    fs::create_symlink("libbeta.so.2.0", lib + "/libbeta.so.2");  // pointed anew at 2.1
    so(lib + "/libomega.so.1.0.0", "libomega.so.1");
    fs::create_symlink("libomega.so.1.0.0", lib + "/libomega.so.1.0");  // not the SONAME: a file
    so(lib + "/libnosoname.so", "");
    build_executable(lib + "/libprog.so.1", "int main(void) { return 0; }", "", tmp_);  // PIE: ET_DYN
    tmp_.write("root/usr/lib/x86_64-linux-gnu/libjunk.so.1", "not a library\n");
    tmp_.write("root/usr/lib/x86_64-linux-gnu/libscript.so", "/* GNU ld script */\nGROUP ( libalpha.so.1 )\n");
    fs::create_symlink("libgone.so.1", lib + "/libstale.so.1");
    so(lib + "/x86_64/libleg.so.1", "libleg.so.1");
    so(lib + "/libleg.so.1", "libleg.so.1");
    so(lib + "/haswell/libleg.so.1", "libleg.so.1");
    so(local + "/tls/libtls.so.1", "libtls.so.1");
    so(local + "/libdelta.so.1", "libdelta.so.1");
    so(local + "/glibc-hwcaps/x86-64-v3/libdelta.so.1", "libdelta.so.1");
    so(local + "/glibc-hwcaps/x86-64-v2/libdelta.so.1", "libdelta.so.1");
    so(local + "/libgamma.so.1", "libgamma.so.1");
    so(root_ + "/opt/gamma/lib/libgamma.so.1", "libgamma.so.1");
    so(root_ + "/opt/gamma/lib/libgamma.so.1.5", "libgamma.so.1");
    fs::create_directories(root_ + "/opt");
    fs::create_symlink("/opt/gamma/lib", root_ + "/opt/alias");  // the same directory again
    so(root_ + "/usr/lib/libold.so.1", "libold.so.1");
    so(root_ + "/opt/cmd/libcmd.so.1", "libcmd.so.1");
    // gcc -m32 comes with gcc-multilib (scripts/install-deps.sh --test).
    so(root_ + "/opt/l32/libthirty.so.1", "libthirty.so.1", "-m32 -nostdlib");
    so(root_ + "/opt/l32/libthirtyc.so.1", "libthirtyc.so.1", "-m32 -Wl,--no-as-needed -lc");
    tmp_.write("root/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n# the end\n");
    tmp_.write("root/etc/ld.so.conf.d/10-gamma.conf",
               "  /opt/gamma/lib/  # gamma's\nhwcap 1 nosegneg\n/usr/local/lib=libc6\n/nowhere\n\n");
    tmp_.write("root/etc/ld.so.conf.d/20-more.conf", "/opt/alias\ninclude /etc/ld.so.conf.d/extra/*.conf /etc/none*\n");
    tmp_.write("root/etc/ld.so.conf.d/extra/l32.conf", "/opt/l32\n");
  }

  // ldconfig on a fresh copy of the root, with `args` after the root; the model on the root.
  void expect_same(const std::vector<std::string>& command_line) {
    std::string copy = tmp_ / ("copy" + std::to_string(n_++));
    ASSERT_EQ(run("cp -a " + quote(root_) + " " + quote(copy)).status, 0);
    std::string args;
    for (const std::string& d : command_line) args += " " + quote(d);
    CommandResult real = run("ldconfig -r " + quote(copy) + args);
    ASSERT_EQ(real.status, 0) << real.err;
    std::string error;
    std::unique_ptr<loader::LdCache> cache = loader::LdCache::load(copy + "/etc/ld.so.cache", &error);
    ASSERT_TRUE(cache) << error;

    loader::ObjectStore store(root_);
    loader::LdconfigOptions options;
    options.command_line = command_line;
    loader::LdconfigResult model = loader::run_ldconfig(support::FileRoot(root_), store, options);
    std::vector<Row> want = rows_of(*cache), got = rows_of(model);
    EXPECT_EQ(got, want);
    ASSERT_FALSE(want.empty());

    // The links it made or pointed anew (the stale one it removed is no load's business).
    std::map<std::string, std::string> before = links_below(root_), after = links_below(copy), made;
    for (const auto& [path, target] : after)
      if (!before.count(path) || before[path] != target) made[path] = target;
    std::map<std::string, std::string> predicted;
    for (const loader::LdconfigLink& l : model.links) predicted[l.path] = l.target;
    EXPECT_EQ(predicted, made);
    EXPECT_EQ(made["/usr/lib/x86_64-linux-gnu/libalpha.so.1"], "libalpha.so.1.2.3");
    EXPECT_EQ(made["/usr/lib/x86_64-linux-gnu/libbeta.so.2"], "libbeta.so.2.1");
  }

  TempDir tmp_;
  std::string root_;
  int n_ = 0;
};

TEST_F(LdconfigModel, TheCacheAndLinksOfARootAreLdconfigsOwn) {
  if (HasFatalFailure()) return;
  expect_same({});
}

TEST_F(LdconfigModel, CommandLineDirectoriesComeFirst) {
  if (HasFatalFailure()) return;
  // As the NVIDIA container toolkit runs it: the driver's directory before the configuration.
  expect_same({"/opt/cmd", "/usr/local/lib"});
}

// A legacy hwcap subdirectory's entry (x86_64/, tls/) is one ld.so takes from the cache on this
// CPU, before the plain entry; a platform's (haswell/) only on that platform. Referee: ld.so's
// --list of a program inside the root, with the cache real ldconfig wrote.
TEST(LdCacheLegacyHwcaps, EntriesOfLegacySubdirectoriesAreTheLoadersChoice) {
  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc") || !have_tool("ldconfig"))
    GTEST_SKIP() << "needs root, chroot, gcc and ldconfig";
  TempDir tmp;
  std::string root = tmp / "root", lib = root + "/usr/lib/x86_64-linux-gnu";
  std::string own = tmp / "build/libleg.so.1";
  build_shared(own, "int leg(void) { return 0; }", "-Wl,-soname,libleg.so.1", tmp);
  if (HasFatalFailure()) return;
  build_executable(root + "/prog", "int leg(void);\nint main(void) { return leg(); }\n", quote(own), tmp);
  fs::create_directories(lib);
  for (const char* name : {"ld-linux-x86-64.so.2", "libc.so.6"})
    fs::copy_file(std::string("/lib/x86_64-linux-gnu/") + name, lib + "/" + name);
  fs::create_directories(root + "/lib64");
  fs::create_symlink("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root + "/lib64/ld-linux-x86-64.so.2");
  tmp.write("root/etc/ld.so.conf", "/opt/leg\n");
  auto listed = [&](const std::string& command) {
    CommandResult r = run(command);
    size_t at = r.out.find("libleg.so.1 => ");
    return at == std::string::npos ? r.out + r.err : r.out.substr(at, r.out.find_first_of(" \n", at + 15) - at);
  };
  for (const char* sub : {"", "x86_64/", "tls/", "haswell/"}) {
    fs::create_directories(root + "/opt/leg/" + sub);
    fs::copy_file(own, root + "/opt/leg/" + sub + "libleg.so.1");
    ASSERT_EQ(run("ldconfig -r " + quote(root)).status, 0);
    std::string real = listed("chroot " + quote(root) + " /lib64/ld-linux-x86-64.so.2 --list /prog");
    std::string predicted = listed(quote(envdoctor()) + " ldd --root " + quote(root) + " /prog");
    EXPECT_EQ(predicted, real) << "with " << sub;
    EXPECT_EQ(real.rfind("libleg.so.1 => /opt/leg/", 0), 0u) << real;
  }
}

// Crafted configuration: a file that includes itself and one that includes another that includes
// it back (real ldconfig recurses until it crashes), a line of a thousand slashes, and a directory
// whose hwcap-named subdirectory links back to it. The model reads each once and ends.
TEST(LdconfigModelHostile, IncludeCyclesAndLinkLoopsEnd) {
  TempDir tmp;
  std::string root = tmp / "root";
  build_shared(root + "/opt/a/libcyc.so.1", "int cyc(void) { return 1; }", "-Wl,-soname,libcyc.so.1", tmp);
  if (HasFatalFailure()) return;
  fs::create_symlink(".", root + "/opt/a/x86_64");
  tmp.write("root/etc/ld.so.conf",
            "include /etc/ld.so.conf\ninclude /etc/c/*.conf\n/opt/a\n" + std::string(1000, '/') + "\n");
  tmp.write("root/etc/c/one.conf", "include /etc/c/two.conf\n");
  tmp.write("root/etc/c/two.conf", "include /etc/c/one.conf\n/opt/a\n");
  loader::ObjectStore store(root);
  loader::LdconfigResult r = loader::run_ldconfig(support::FileRoot(root), store, {});
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].path, "/opt/a/libcyc.so.1");
  EXPECT_EQ(std::count(r.dirs.begin(), r.dirs.end(), "/opt/a"), 1);
}

TEST(LdconfigLibcmp, DigitsCompareAsNumbers) {
  EXPECT_LT(loader::cache_libcmp("libfoo.so.2", "libfoo.so.10"), 0);
  EXPECT_GT(loader::cache_libcmp("libfoo.so.1.0.0", "libfoo.so.1.0"), 0);
  EXPECT_EQ(loader::cache_libcmp("libfoo.so.1", "libfoo.so.1"), 0);
  EXPECT_GT(loader::cache_libcmp("libfoo.so.1", "libfoo.so."), 0);  // a digit beats anything else
  EXPECT_LT(loader::cache_libcmp("liba.so", "libb.so"), 0);
}

}  // namespace
}  // namespace envdoctor::test
