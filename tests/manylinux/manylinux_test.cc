// The wheel `make wheel` ships, where its users are (issue 47): its binary is the release build's
// objects linked against Debian 11's glibc (src/CMakeLists.txt's envdoctor_manylinux), so that it
// earns manylinux_2_28 and pip installs it on RHEL 8 and 9 and Ubuntu 22.04, which refuse
// build/envdoctor's manylinux_2_36. The referees: the real auditwheel on the wheel, and the real pip
// of an older distribution (Debian 11: glibc 2.31, Python 3.9, pip 20.3) installing it in a chroot
// of that distribution's root, where `envdoctor check` then runs on that root's own Python.
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>

#include "fixtures/fixture.h"
#include "fixtures/referees.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// The glibc a manylinux_X_Y_ARCH tag names, or {0, 0}.
std::pair<int, int> tag_glibc(const std::string& tag) {
  std::smatch m;
  if (!std::regex_search(tag, m, std::regex(R"(manylinux_(\d+)_(\d+)_)"))) return {0, 0};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

std::string shipped_binary() { return (fs::path(envdoctor()).parent_path() / "manylinux" / "envdoctor").string(); }

// The wheel as `make wheel` builds it (its binary, the man page and completions of build/, and
// --require-tag), once per test process, into its own folder; "" with `why` set when the release
// tree has no envdoctor_manylinux.
std::string shipped_wheel(std::string* why) {
  static TempDir dist;
  static CommandResult built = [] {
    if (!fs::exists(shipped_binary())) return CommandResult{};
    return run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/packaging/build_wheel.py") + " --binary " +
               quote(shipped_binary()) + " --docs " +
               quote((fs::path(envdoctor()).parent_path() / "packaging").string()) + " --out " +
               quote(dist.path().string()) + " --require-tag manylinux_2_28");
  }();
  if (built.status == -1) {
    *why = "needs " + shipped_binary() +
           ", which the release tree builds once Debian 11's glibc root is made (scripts/debian-root.sh glibc; "
           "scripts/install-deps.sh --test makes it)";
    return "";
  }
  EXPECT_EQ(built.status, 0) << built.out << built.err;
  return built.out.substr(0, built.out.find('\n'));
}

// The wheel of this machine's build/envdoctor (manylinux_2_36 here): what the older pip must refuse.
std::string native_wheel(const TempDir& dist) {
  CommandResult r = run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/packaging/build_wheel.py") +
                        " --binary " + quote(envdoctor()) + " --out " + quote(dist.path().string()));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out.substr(0, r.out.find('\n'));
}

// What the binary's dynamic section needs (readelf -d's NEEDED).
std::set<std::string> needed(const std::string& file) {
  CommandResult r = run("readelf -d " + quote(file));
  std::set<std::string> out;
  std::regex line(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), line); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// The real auditwheel reads the wheel as consistent with manylinux_2_28 or older, and with the very
// tag the wheel carries and envdoctor wheel-tag computed; the binary needs only libraries of every
// manylinux policy (libgcc_s, and glibc's own).
TEST(ShippedWheel, AuditwheelFindsItManylinux2_28) {
  std::string why;
  std::string wheel = shipped_wheel(&why);
  if (wheel.empty()) GTEST_SKIP() << why;
  std::string auditwheel = pinned_tool("auditwheel", &why);
  if (auditwheel.empty()) GTEST_SKIP() << why;
  std::smatch m;
  std::string name = fs::path(wheel).filename().string();
  ASSERT_TRUE(std::regex_match(name, m, std::regex(R"(envdoctor-[0-9.]+-py3-none-(manylinux_\d+_\d+_x86_64)\.whl)")))
      << name;
  std::string tag = m[1];
  EXPECT_LE(tag_glibc(tag), std::make_pair(2, 28)) << tag;

  CommandResult a = run(auditwheel + " show --json " + quote(wheel));
  ASSERT_EQ(a.status, 0) << a.out << a.err;
  json audit = json::parse(a.out);
  EXPECT_EQ(audit["overall_tag"], tag) << a.out;
  EXPECT_EQ(audit["sym_tag"], tag) << a.out;  // what the symbol versions alone allow

  EXPECT_EQ(needed(shipped_binary()), (std::set<std::string>{"libc.so.6", "libdl.so.2", "libgcc_s.so.1",
                                                             "libpthread.so.0", "ld-linux-x86-64.so.2"}));
}

// `make wheel`'s --require-tag refuses a binary that earns more than manylinux_2_28, as this
// machine's build/envdoctor does, naming the symbols, and writes no wheel.
TEST(ShippedWheel, ABinaryThatEarnsMoreIsRefused) {
  CommandResult tag = run(quote(envdoctor()) + " wheel-tag " + quote(envdoctor()));
  std::string earned = tag.out.substr(tag.out.find(": ") + 2, tag.out.find('\n') - tag.out.find(": ") - 2);
  if (tag_glibc(earned) <= std::make_pair(2, 28)) GTEST_SKIP() << "build/envdoctor earns " << earned << " here";
  TempDir dist;
  CommandResult r =
      run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/packaging/build_wheel.py") + " --binary " +
          quote(envdoctor()) + " --out " + quote(dist.path().string()) + " --require-tag manylinux_2_28");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("build_wheel: " + envdoctor() + " earns " + earned +
                            ", newer than the manylinux_2_28 required:\n" + tag.out,
                        0),
            0u)
      << r.err;
  EXPECT_TRUE(fs::is_empty(dist.path()));
}

// Lazily opened libraries work from the shipped binary as from build/envdoctor: libzip reads a wheel
// for --with, libcrypto hashes every RECORD row for --verify-hashes.
TEST(ShippedWheel, ItsBinaryOpensLibzipAndLibcrypto) {
  std::string why;
  std::string wheel = shipped_wheel(&why);
  if (wheel.empty()) GTEST_SKIP() << why;
  TempDir tmp;
  ASSERT_EQ(run("python3 -m venv --without-pip " + quote(tmp / "venv")).status, 0);
  CommandResult with = run(quote(shipped_binary()) + " check --json --verify-hashes --python " +
                           quote(tmp / "venv/bin/python") + " --with " + quote(wheel));
  EXPECT_EQ(with.status, 0) << with.err;
  json checked = json::parse(with.out.empty() ? "{}" : with.out);
  EXPECT_EQ(checked["environment"]["packages"], 1);
  EXPECT_TRUE(checked["findings"].empty()) << checked.dump(2);
}

// The Debian 11 root of scripts/debian-root.sh python, and a folder of the test's inside it that
// goes with the test.
class OlderDistribution : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, for chroot";
    if (!have_tool("chroot") || !have_tool("unshare")) GTEST_SKIP() << "needs chroot and unshare (util-linux)";
    root_ = test_cache_dir() + "/roots/debian-11-python";
    if (!fs::exists(root_ + "/.complete"))
      GTEST_SKIP() << "needs Debian 11's root in " << root_
                   << " (scripts/debian-root.sh python, with mmdebstrap; scripts/install-deps.sh --test makes it)";
    std::string pattern = root_ + "/tmp/envdoctor-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    inside_ = pattern.substr(root_.size());
  }
  void TearDown() override {
    std::error_code ec;
    if (!inside_.empty()) fs::remove_all(root_ + inside_, ec);
  }

  // `command` run by /bin/sh in the chroot, in the test's folder, with /proc of its own and none of
  // this machine's environment (PIP_FIND_LINKS and the like).
  CommandResult in_root(const std::string& command) const {
    return run("unshare --mount --pid --fork --mount-proc=" + quote(root_ + "/proc") + " chroot " + quote(root_) +
               " /usr/bin/env -i PATH=/usr/bin:/bin HOME=" + inside_ + " LANG=C.UTF-8 /bin/sh -c " +
               quote("cd " + inside_ + " && " + command));
  }

  // Copies `file` into the test's folder; its path as the chroot sees it.
  std::string put(const std::string& file) const {
    fs::copy_file(file, root_ + inside_ + "/" + fs::path(file).filename().string());
    return inside_ + "/" + fs::path(file).filename().string();
  }

  std::string root_, inside_;
};

// Debian 11's own pip (in a venv of its python3) installs the wheel, which build/envdoctor's own
// manylinux_2_36 wheel it refuses; bin/envdoctor and `python -m envdoctor` then check that venv on
// glibc 2.31 and find nothing wrong.
TEST_F(OlderDistribution, ItsPipInstallsTheWheelAndCheckRunsOnItsPython) {
  std::string why;
  std::string wheel = shipped_wheel(&why);
  if (wheel.empty()) GTEST_SKIP() << why;
  CommandResult libc =
      in_root("python3 -c 'import os, sys; print(os.confstr(\"CS_GNU_LIBC_VERSION\"), sys.version_info[:2])'");
  ASSERT_EQ(libc.status, 0) << libc.err;
  EXPECT_EQ(libc.out, "glibc 2.31 (3, 9)\n");
  CommandResult venv = in_root("python3 -m venv venv && venv/bin/pip --version");
  ASSERT_EQ(venv.status, 0) << venv.out << venv.err;
  EXPECT_EQ(venv.out.rfind("pip 20.3.4 ", 0), 0u) << venv.out;

  TempDir dist;
  std::string native = put(native_wheel(dist));
  std::string pip = "venv/bin/pip install --no-index --no-cache-dir --disable-pip-version-check ";
  CommandResult refused = in_root(pip + native);
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("is not a supported wheel on this platform"), std::string::npos) << refused.err;

  CommandResult installed = in_root(pip + put(wheel));
  ASSERT_EQ(installed.status, 0) << installed.out << installed.err;
  EXPECT_NE(installed.out.find("Successfully installed envdoctor-" ENVDOCTOR_VERSION), std::string::npos)
      << installed.out;

  // The venv: pip and setuptools of Debian 11's ensurepip, and envdoctor.
  CommandResult check = in_root("venv/bin/envdoctor check");
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_TRUE(std::regex_search(
      check.out,
      std::regex(
          "^" + inside_ +
          R"(/venv/bin/python \(Python 3\.9\.\d+, managed by pip\): \d+ packages, \d+ ELF files\n\nAll clear: every library here will load\.\n)")))
      << check.out << check.err;
  CommandResult module = in_root("venv/bin/python -m envdoctor check --json");
  EXPECT_EQ(module.status, 0) << module.err;
  json checked = json::parse(module.out.empty() ? "{}" : module.out);
  EXPECT_EQ(checked["environment"]["python"], inside_ + "/venv/bin/python") << module.out;
  EXPECT_EQ(checked["environment"]["version"].get<std::string>().rfind("3.9.", 0), 0u) << module.out;
  EXPECT_TRUE(checked["findings"].empty()) << module.out;
  EXPECT_EQ(checked["summary"]["errors"], 0) << module.out;

  // The persistent index on glibc 2.31, whose stat is __xstat (cli/input_interposer.cc): the run a
  // second after the install is kept, and the next is answered from it.
  std::string indexed = "XDG_CACHE_HOME=" + inside_ + "/cache venv/bin/envdoctor check";
  CommandResult first = in_root("sleep 1.1 && " + indexed);
  EXPECT_EQ(first.status, 0) << first.err;
  CommandResult kept = in_root("ls cache/envdoctor/index-v1");
  EXPECT_NE(kept.out.find(".entry"), std::string::npos) << kept.out << kept.err;
  CommandResult again = in_root(indexed);
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.out, check.out);
}

}  // namespace
}  // namespace envdoctor::test
