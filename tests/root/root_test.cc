// `envdoctor check --root DIR --prefix /opt/venv`: a container's root file system built here from
// this machine's own loader, C library and CPython, with its own ld.so.cache (`ldconfig -r`), a
// venv laid out as the container sees it and wheels installed into it by the real pip
// (`pip install --root DIR --prefix /opt/venv`). The referee for every load is glibc's ld.so run
// inside the root (`chroot DIR /lib64/ld-linux-x86-64.so.2 --list FILE`), when chroot is allowed.
#include <gnu/libc-version.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "environment/environment.h"
#include "fixtures/python_fixture.h"
#include "fixtures/venv.h"
#include "loader/object_store.h"
#include "loader/search_paths.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::string kSite = "/opt/venv/lib/python3.11/site-packages";

// A file of this machine placed into the root: a hard link when the file systems allow, else a copy.
void place(const std::string& from, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// Renames a file of the shared root away for one test and back afterwards.
class Hidden {
 public:
  explicit Hidden(std::string path) : path_(std::move(path)) { fs::rename(path_, path_ + ".hidden"); }
  ~Hidden() {
    std::error_code ec;
    fs::rename(path_ + ".hidden", path_, ec);
  }

 private:
  std::string path_;
};

class RootTest : public ::testing::Test {
 protected:
  // The root is built once for the suite; tests that change it undo the change.
  static void SetUpTestSuite() {
    skip_ = "";
    if (!have_tool("gcc") || !have_tool("python3") || !have_tool("ldconfig")) {
      skip_ = "needs gcc, python3 and ldconfig";
      return;
    }
    if (!python3_facts().pip) {
      skip_ = "needs pip";
      return;
    }
    CommandResult v =
        run("python3 -c 'import sys, sysconfig; print(sys.version_info[:2] == (3, 11)); "
            "print(sysconfig.get_config_var(\"LIBDIR\")); print(sysconfig.get_config_var(\"INSTSONAME\")); "
            "print(sys.executable)'");
    std::vector<std::string> lines;
    for (size_t pos = 0, nl; (nl = v.out.find('\n', pos)) != std::string::npos; pos = nl + 1)
      lines.push_back(v.out.substr(pos, nl - pos));
    if (v.status != 0 || lines.size() != 4 || lines[0] != "True") {
      skip_ = "needs python3 3.11";
      return;
    }
    std::string libpython = lines[1] + "/" + lines[2];
    std::string python = fs::canonical(lines[3]).string();
    if (!fs::exists(libpython) || !fs::exists(python_include() + "/Python.h")) {
      skip_ = "needs a shared libpython3.11 and Python.h";
      return;
    }
    tmp_ = new TempDir();
    root_ = *tmp_ / "root";
    build_root(python, libpython);
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(tmp_, nullptr);
  }

  static void build_root(const std::string& python, const std::string& libpython) {
    const TempDir& tmp = *tmp_;
    // The loader and the C library, where Debian's loader looks for them.
    for (const char* lib : {"ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6"})
      place(std::string("/lib/x86_64-linux-gnu/") + lib, root_ + "/lib/x86_64-linux-gnu/" + lib);
    fs::create_directories(root_ + "/lib64");
    fs::create_symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root_ + "/lib64/ld-linux-x86-64.so.2");
    // CPython as the official images install it: /usr/local, found through the cache.
    place(python, root_ + "/usr/local/bin/python3.11");
    place(libpython, root_ + "/usr/local/lib/libpython3.11.so.1.0");
    // A library in a directory only the root's own ld.so.conf names.
    build_shared(root_ + "/opt/lib/libopt.so.1", "int opt_fn(void) { return 3; }", "-Wl,-soname,libopt.so.1", tmp);
    tmp.write("root/etc/ld.so.conf", "/usr/local/lib\n/opt/lib\n");
    CommandResult ldconfig = run("ldconfig -r " + quote(root_));
    ASSERT_EQ(ldconfig.status, 0) << ldconfig.err;
    ASSERT_TRUE(fs::exists(root_ + "/etc/ld.so.cache"));

    // The venv, as `python3.11 -m venv /opt/venv` makes it inside the container.
    tmp.write("root/opt/venv/pyvenv.cfg",
              "home = /usr/local/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n");
    fs::create_directories(root_ + "/opt/venv/bin");
    fs::create_symlink("/usr/local/bin/python3.11", root_ + "/opt/venv/bin/python");
    fs::create_directories(root_ + kSite);

    std::string suffix = ext_suffix(), include = "-I" + quote(python_include());
    auto ext = [&](const std::string& module, const std::string& decl, const std::string& call,
                   const std::string& flags) {
      std::string out = tmp / ("build/" + module + suffix);
      build_shared(out, extension_source(module, decl, call), include + " " + flags, tmp);
      return out;
    };
    std::string opt =
        ext("_opt", "int opt_fn(void);", "opt_fn()", "-L" + quote(root_ + "/opt/lib") + " -l:libopt.so.1");
    // zlib is on this machine, not in the root: it must not be found.
    std::string z = ext("_z", "unsigned long zlibCompileFlags(void);", "(long)zlibCompileFlags()", "-lz");
    std::string clean_lib = tmp / "build/libclean.so";
    build_shared(clean_lib, "int clean_fn(void) { return 7; }", "-Wl,-soname,libclean.so", tmp);
    std::string clean = ext("_clean", "int clean_fn(void);", "clean_fn()",
                            "-L" + quote(tmp / "build") + " -lclean -Wl,-rpath,'$ORIGIN/lib'");
    // A system CUDA runtime (a gcc-built stand-in with its SONAME) reached through a link that
    // only resolves inside the root: /opt/cuda/current -> /opt/cuda.
    build_shared(root_ + "/opt/cuda/lib/libcudart.so.13", "int cudart_fn(void) { return 13; }",
                 "-Wl,-soname,libcudart.so.13", tmp);
    fs::create_symlink("/opt/cuda", root_ + "/opt/cuda/current");
    std::string cu =
        ext("_cu", "int cudart_fn(void);", "cudart_fn()",
            "-L" + quote(root_ + "/opt/cuda/lib") + " -l:libcudart.so.13 -Wl,-rpath,/opt/cuda/current/lib");
    std::string wheels = tmp / "wheels";
    fs::create_directories(wheels);
    json base = {{"version", "1.0"}, {"tag", "cp311-cp311-linux_x86_64"}, {"purelib", false}};
    auto wheel = [&](const std::string& name, json paths) {
      json spec = base;
      spec["name"] = name;
      spec["files"] = {{name + "/__init__.py", ""}};
      spec["paths"] = std::move(paths);
      return make_wheel(wheels, spec);
    };
    std::vector<std::string> all = {
        wheel("optpkg", {{"optpkg/_opt" + suffix, opt}}),
        wheel("zpkg", {{"zpkg/_z" + suffix, z}}),
        wheel("cleanpkg", {{"cleanpkg/_clean" + suffix, clean}, {"cleanpkg/lib/libclean.so", clean_lib}}),
        wheel("cudapkg", {{"cudapkg/_cu" + suffix, cu}}),
    };
    std::string cmd = "python3 -m pip install --root " + quote(root_) +
                      " --prefix /opt/venv --no-index --no-deps --no-compile --disable-pip-version-check -q";
    for (const std::string& w : all) cmd += " " + quote(w);
    CommandResult pip = run(cmd);
    ASSERT_EQ(pip.status, 0) << cmd << "\n" << pip.err;
    ASSERT_TRUE(fs::exists(root_ + kSite + "/zpkg-1.0.dist-info/RECORD"));
  }

  static CommandResult check(const std::string& args) {
    return run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " check --json --root " + quote(root_) + " " + args);
  }
  static json check_json(int* status, const std::string& args = "--prefix /opt/venv") {
    CommandResult r = check(args);
    *status = r.status;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    return json::parse(r.out.empty() ? "{}" : r.out);
  }

  // The referee: glibc's loader inside the root. nullopt when chroot is not permitted here.
  static std::optional<CommandResult> referee(const std::string& file) {
    CommandResult r = run("chroot " + quote(root_) + " /lib64/ld-linux-x86-64.so.2 --list " + quote(file));
    if (r.status != 0 && r.err.find("chroot:") != std::string::npos) return std::nullopt;
    return r;
  }

  static std::string skip_;
  static TempDir* tmp_;
  static std::string root_;
};

std::string RootTest::skip_;
TempDir* RootTest::tmp_ = nullptr;
std::string RootTest::root_;

std::vector<json> findings(const json& report, const std::string& code) {
  std::vector<json> out;
  for (const json& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

TEST_F(RootTest, ReportsTheContainersOwnPathsAndItsMissingLibrary) {
  int status = -1;
  json report = check_json(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  EXPECT_EQ(report["environment"]["python"], "/opt/venv/bin/python");
  EXPECT_EQ(report["environment"]["version"], "3.11.7");
  EXPECT_EQ(report["environment"]["site_packages"], json::array({kSite}));
  EXPECT_EQ(report["environment"]["packages"], 4);
  EXPECT_EQ(report["environment"]["elf_files"], 5);
  // libz.so.1 is on this machine; the container has none. libopt.so.1 is found through the
  // root's ld.so.cache (/opt/lib), libpython through it too (/usr/local/lib), libclean.so by
  // $ORIGIN: nothing else fails.
  ASSERT_EQ(report["findings"].size(), 1u) << report.dump(1);
  const json& f = report["findings"][0];
  EXPECT_EQ(f["code"], "missing-library");
  EXPECT_EQ(f["library"], "libz.so.1");
  EXPECT_EQ(f["package"], "zpkg");
  EXPECT_EQ(f["file"], kSite + "/zpkg/_z" + ext_suffix());
  EXPECT_EQ(f["message"], "libz.so.1: cannot open shared object file: No such file or directory");
  // No path of this machine appears anywhere.
  EXPECT_EQ(report.dump().find(root_), std::string::npos) << report.dump(1);
}

TEST_F(RootTest, AgreesWithTheLoaderInsideTheRoot) {
  if (!referee("/usr/local/bin/python3.11")) GTEST_SKIP() << "chroot is not permitted here";
  int status = -1;
  json report = check_json(&status);
  std::set<std::string> predicted;
  for (const json& f : findings(report, "missing-library")) predicted.insert(f["file"].get<std::string>());
  std::set<std::string> failing;
  std::vector<std::string> files = {"/opt/venv/bin/python",
                                    kSite + "/optpkg/_opt" + ext_suffix(),
                                    kSite + "/zpkg/_z" + ext_suffix(),
                                    kSite + "/cleanpkg/_clean" + ext_suffix(),
                                    kSite + "/cleanpkg/lib/libclean.so",
                                    kSite + "/cudapkg/_cu" + ext_suffix()};
  for (const std::string& file : files) {
    std::optional<CommandResult> r = referee(file);
    ASSERT_TRUE(r);
    if (r->status != 0 || r->out.find("not found") != std::string::npos) failing.insert(file);
  }
  EXPECT_EQ(predicted, failing);
  EXPECT_EQ(failing, std::set<std::string>{kSite + "/zpkg/_z" + ext_suffix()});
  // The referee finds libopt.so.1 where the cache says, as the model does.
  EXPECT_NE(referee(kSite + "/optpkg/_opt" + ext_suffix())->out.find("libopt.so.1 => /opt/lib/libopt.so.1"),
            std::string::npos);
}

TEST_F(RootTest, WithoutTheRootsCacheItsExtraDirectoriesAreNotSearched) {
  Hidden cache(root_ + "/etc/ld.so.cache");
  int status = -1;
  json report = check_json(&status);
  EXPECT_EQ(status, 1);
  std::set<std::string> missing;
  for (const json& f : findings(report, "missing-library")) missing.insert(f["library"].get<std::string>());
  // This machine's cache has neither /opt/lib nor the root's /usr/local/lib: nothing leaks in.
  EXPECT_EQ(missing, (std::set<std::string>{"libz.so.1", "libopt.so.1", "libpython3.11.so.1.0"})) << report.dump(1);
  // This machine's $LD_LIBRARY_PATH is not the container's; --ld-library-path is.
  std::string opt = kSite + "/optpkg/_opt" + ext_suffix();
  auto opt_missing = [&](const std::string& how) {
    CommandResult r =
        run(how + " " + quote(envdoctor()) + " check --json --root " + quote(root_) + " --prefix /opt/venv");
    json j = json::parse(r.out.empty() ? "{}" : r.out);
    for (const json& f : findings(j, "missing-library"))
      if (f["file"] == opt) return true;
    return false;
  };
  EXPECT_TRUE(opt_missing("LD_LIBRARY_PATH=/opt/lib"));
  CommandResult flagged = check("--prefix /opt/venv --ld-library-path /opt/lib");
  EXPECT_EQ(flagged.out.find("libopt.so.1"), std::string::npos) << flagged.out;
  if (std::optional<CommandResult> r = referee(opt)) {
    EXPECT_EQ(r->status, 127);
    EXPECT_NE(r->err.find("libopt.so.1: cannot open shared object file"), std::string::npos) << r->err;
  }
}

TEST_F(RootTest, RecordChecksReadBelowTheRoot) {
  Hidden lib(root_ + kSite + "/cleanpkg/lib/libclean.so");
  int status = -1;
  json report = check_json(&status, "--prefix " + quote(root_ + "/opt/venv") + " --verify-hashes");
  EXPECT_EQ(status, 1);
  auto lost = findings(report, "record-missing-file");
  ASSERT_EQ(lost.size(), 1u) << report.dump(1);
  EXPECT_EQ(lost[0]["file"], kSite + "/cleanpkg/lib/libclean.so");
  EXPECT_EQ(lost[0]["package"], "cleanpkg");
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 2u) << report.dump(1);
  EXPECT_EQ(missing[0]["library"], "libclean.so");
  // pip installed it from a wheel file of this machine, which the root does not hold: no command
  // that would fail inside the container, and the hint says why.
  std::string hint = missing[0]["hint"];
  EXPECT_EQ(hint.rfind("cleanpkg lists cleanpkg/lib/libclean.so but the file is gone (another package that installed "
                       "the same path was uninstalled, or it was deleted); cleanpkg was installed from ",
                       0),
            0u)
      << hint;
  EXPECT_TRUE(hint.ends_with(", which is no longer there: rebuild it, then install it")) << hint;
  EXPECT_FALSE(missing[0].contains("fix_command")) << missing[0].dump();
  // Every other file matches its RECORD's hash, read below the root.
  EXPECT_TRUE(findings(report, "record-hash-mismatch").empty()) << report.dump(1);
}

TEST_F(RootTest, SimulatesPipInsideTheRoot) {
  int status = -1;
  json report = check_json(&status, "--prefix /opt/venv --without zpkg");
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_EQ(report["environment"]["packages"], 3);  // cleanpkg, cudapkg, optpkg
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
  // Reinstalling cleanpkg from its wheel changes nothing: the simulated files are in-root too.
  std::string wheel = *tmp_ / "wheels/cleanpkg-1.0-cp311-cp311-linux_x86_64.whl";
  report = check_json(&status, "--prefix /opt/venv --without cleanpkg --with " + quote(wheel));
  EXPECT_EQ(status, 0) << report.dump(1);
  for (const json& f : report["findings"]) EXPECT_FALSE(f["new"].get<bool>()) << f.dump(1);
}

// A Debian-managed distribution (no INSTALLER; dpkg's file list owns its METADATA) is judged by
// dpkg's records, not by the upstream RECORD Debian's build leaves behind: with --verify-hashes,
// each file under the site directories whose MD5 sum is not the one PKG.md5sums lists is a
// record-hash-mismatch naming the Debian package, with apt-get's fix. The referee is dpkg itself:
// `dpkg --root ROOT --verify` on the same database flags exactly those files (and, outside
// sys.path, documentation, which does not decide whether anything imports).
TEST_F(RootTest, DebianPackageIsVerifiedByDpkgsMd5sums) {
  // The package's files and database, removed when the test ends: the root is the suite's.
  struct Placed {
    std::vector<std::string> paths;
    ~Placed() {
      for (const std::string& p : paths) fs::remove_all(p);
    }
  } placed{{root_ + "/var/lib/dpkg", root_ + kSite + "/debpkg", root_ + kSite + "/debpkg-1.0.dist-info",
            root_ + "/usr/share/doc/python3-debpkg"}};
  const TempDir& tmp = *tmp_;
  const std::string site = kSite.substr(1);  // as dpkg's lists spell paths: below the root
  tmp.write("root/" + site + "/debpkg/__init__.py", "VALUE = 1\n");
  build_shared(root_ + kSite + "/debpkg/libdeb.so", "int deb(void) { return 1; }", "-Wl,-soname,libdeb.so", tmp);
  tmp.write("root/" + site + "/debpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: debpkg\nVersion: 1.0\n");
  // The upstream build's RECORD: stale for what Debian installed (stripped, patched). Not the judge.
  tmp.write("root/" + site + "/debpkg-1.0.dist-info/RECORD",
            "debpkg/__init__.py,sha256=AAAA,3\ndebpkg/libdeb.so,sha256=AAAA,1\ndebpkg-1.0.dist-info/METADATA,,\n");
  tmp.write("root/usr/share/doc/python3-debpkg/changelog", "debpkg (1.0-1) unstable\n");
  std::vector<std::string> files = {site + "/debpkg/__init__.py", site + "/debpkg/libdeb.so",
                                    site + "/debpkg-1.0.dist-info/METADATA", site + "/debpkg-1.0.dist-info/RECORD",
                                    "usr/share/doc/python3-debpkg/changelog"};
  std::string list = "/.\n/opt\n/usr\n/usr/share/doc/python3-debpkg\n/" + site + "/debpkg\n";
  std::string md5sum = "cd " + quote(root_) + " && md5sum";
  for (const std::string& f : files) {
    list += "/" + f + "\n";
    md5sum += " " + quote(f);
  }
  CommandResult sums = run(md5sum);
  ASSERT_EQ(sums.status, 0) << sums.err;
  tmp.write("root/var/lib/dpkg/info/python3-debpkg.list", list);
  tmp.write("root/var/lib/dpkg/info/python3-debpkg.md5sums", sums.out);
  tmp.write("root/var/lib/dpkg/status",
            "Package: python3-debpkg\nStatus: install ok installed\nPriority: optional\nSection: python\n"
            "Maintainer: Test <test@example.org>\nArchitecture: all\nVersion: 1.0-1\nDescription: a test\n\n");

  auto debpkg_findings = [&](const std::string& args) {
    int status = -1;
    json report = check_json(&status, "--prefix /opt/venv " + args);
    std::vector<json> out;
    for (const json& f : report["findings"])
      if (f["package"] == "debpkg" ||
          (f["file"].is_string() && f["file"].get<std::string>().find("debpkg") != std::string::npos))
        out.push_back(f);
    return out;
  };
  // dpkg's own verdict: the files whose MD5 sum differs ("??5?????? PATH").
  bool have_dpkg = have_tool("dpkg");
  auto dpkg_flags = [&] {
    std::set<std::string> out;
    CommandResult r = run("dpkg --root=" + quote(root_) + " --verify python3-debpkg");
    EXPECT_EQ(r.err, "");
    for (size_t pos = 0, nl; (nl = r.out.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      std::string line = r.out.substr(pos, nl - pos);
      if (line.size() > 3 && line[2] == '5') out.insert(line.substr(line.find('/')));
    }
    return out;
  };

  // As installed: nothing to say, though the RECORD's sizes and hashes are all wrong.
  for (const json& f : debpkg_findings("--verify-hashes")) ADD_FAILURE() << f.dump();
  if (have_dpkg) {
    EXPECT_EQ(dpkg_flags(), std::set<std::string>{});
  }

  // Altered after dpkg installed them: a module and the changelog.
  std::ofstream(root_ + kSite + "/debpkg/__init__.py", std::ios::app) << "VALUE = 2\n";
  std::ofstream(root_ + "/usr/share/doc/python3-debpkg/changelog", std::ios::app) << "edited\n";
  // A changed .py decides no load: a local edit as often as damage, reported with --all-files.
  for (const json& f : debpkg_findings("--verify-hashes")) ADD_FAILURE() << f.dump();
  std::vector<json> found = debpkg_findings("--verify-hashes --all-files");
  ASSERT_EQ(found.size(), 1u);
  const json& f = found[0];
  EXPECT_EQ(f["code"], "record-hash-mismatch");
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_EQ(f["file"], kSite + "/debpkg/__init__.py");
  EXPECT_EQ(f["package"], "debpkg");
  EXPECT_EQ(f["installer"], "debian");
  EXPECT_EQ(f["message"], kSite + "/debpkg/__init__.py does not have the MD5 sum that dpkg lists for python3-debpkg");
  EXPECT_EQ(f["fix_command"], "apt-get install --reinstall python3-debpkg");
  if (have_dpkg) {
    EXPECT_EQ(dpkg_flags(),
              (std::set<std::string>{kSite + "/debpkg/__init__.py", "/usr/share/doc/python3-debpkg/changelog"}));
  }
  // Without --verify-hashes only presence is checked, and every file is there.
  for (const json& f : debpkg_findings("")) ADD_FAILURE() << f.dump();
}

TEST_F(RootTest, RootNeedsAnInRootPrefixAndRunsNothing) {
  CommandResult r = check("");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "envdoctor: --root needs --prefix DIR, the environment's path inside the root (a container's "
            "interpreter cannot be run here)\n");
  r = check("--python python3");
  EXPECT_EQ(r.status, 2);
  r = check("--prefix opt/venv");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: opt/venv: with --root, --prefix is the environment's absolute path inside the root\n");
  r = check("--prefix /srv/none");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: /srv/none: not a directory inside " + root_ + "\n");
}

TEST_F(RootTest, GlibcVersionComesFromTheRoot) {
  loader::LoaderConfig config = loader::LoaderConfig::for_host(root_);
  loader::ObjectStore store(root_);
  EXPECT_EQ(environment::root_glibc_version(store, config), gnu_get_libc_version());

  // An old release's file name; a library with only its version definitions.
  TempDir other;
  std::string named = other / "named";
  build_shared(named + "/lib/x86_64-linux-gnu/libc-2.31.so", "int f(void) { return 0; }", "-Wl,-soname,libc.so.6",
               other);
  fs::create_symlink("libc-2.31.so", named + "/lib/x86_64-linux-gnu/libc.so.6");
  loader::ObjectStore named_store(named);
  EXPECT_EQ(environment::root_glibc_version(named_store, loader::LoaderConfig::for_host(named)), "2.31");

  std::string defs = other / "defs";
  std::string script = other.write("glibc.map",
                                   "GLIBC_2.2.5 { global: a; local: *; };\nGLIBC_2.17 { global: b; } GLIBC_2.2.5;\n"
                                   "GLIBC_2.34 { global: c; } GLIBC_2.17;\nGLIBC_PRIVATE { global: d; };\n");
  build_shared(defs + "/usr/lib64/libc.so.6", "int a, b, c, d;",
               "-Wl,-soname,libc.so.6 -Wl,--version-script," + quote(script), other);
  loader::ObjectStore defs_store(defs);
  EXPECT_EQ(environment::root_glibc_version(defs_store, loader::LoaderConfig::for_host(defs)), "2.34");

  loader::ObjectStore empty_store(other / "empty");
  EXPECT_EQ(environment::root_glibc_version(empty_store, loader::LoaderConfig::for_host(other / "empty")), "");
}

// Regression (issue 13): `why` looked for copies on this machine, where zlib is installed, instead
// of inside the root, where it is not.
TEST_F(RootTest, WhyLooksForCopiesInsideTheRoot) {
  CommandResult r = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " why --root " + quote(root_) +
                        " --prefix /opt/venv libz.so.1");
  // Not found is a load failure: status 1, and the finding with it.
  ASSERT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("    error missing-library\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libz.so.1\n  copies the environment can reach:\n    none\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kSite + "/zpkg/_z" + ext_suffix()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      => not found\n"), std::string::npos) << r.out;

  // The root's own library, found through the root's own cache.
  r = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " why --root " + quote(root_) +
          " --prefix /opt/venv libopt.so.1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    /opt/lib/libopt.so.1  (no package)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      => /opt/lib/libopt.so.1  [ld.so.cache"), std::string::npos) << r.out;
}

// Regression (issue 13): `cuda` keyed the libraries a package loads by their canonical path on this
// machine and the load model's resolutions by their canonical path inside the root, so a runtime
// reached through a link inside the root dropped out of the package's LOADS.
TEST_F(RootTest, CudaFollowsLinksInsideTheRootAsCheckDoes) {
  CommandResult r = run("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " cuda --json --root " + quote(root_) +
                        " --prefix /opt/venv --driver 580.65.06 --gpu sm_90");
  ASSERT_EQ(r.status, 0) << r.err;
  json report = json::parse(r.out);
  ASSERT_EQ(report["runtimes"].size(), 1u) << r.out;
  EXPECT_EQ(report["runtimes"][0]["path"], "/opt/cuda/current/lib/libcudart.so.13");
  EXPECT_EQ(report["runtimes"][0]["used_by"], json::array({"cudapkg"}));
  bool found = false;
  for (const json& p : report["packages"])
    if (p["name"] == "cudapkg") {
      found = true;
      EXPECT_EQ(p["uses"], json::parse(R"([{"library": "libcudart.so.13", "from": "system"}])")) << p.dump();
      EXPECT_EQ(p["cuda_majors"], json::array({13}));
    }
  EXPECT_TRUE(found) << r.out;
}

TEST_F(RootTest, FindsElfFilesBelowTheRootUnderTheirInRootNames) {
  loader::ObjectStore store(root_);
  const support::FileRoot& root = store.file_root();
  std::vector<std::string> files = environment::find_elf_files({kSite}, root);
  std::string s = ext_suffix();
  EXPECT_EQ(files,
            (std::vector<std::string>{kSite + "/cleanpkg/_clean" + s, kSite + "/cleanpkg/lib/libclean.so",
                                      kSite + "/cudapkg/_cu" + s, kSite + "/optpkg/_opt" + s, kSite + "/zpkg/_z" + s}));
  // Links resolve inside the root: /opt/venv/bin/python -> /usr/local/bin/python3.11 there.
  EXPECT_EQ(root.canonical("/opt/venv/bin/python"), "/usr/local/bin/python3.11");
  EXPECT_EQ(root.host_no_follow("/opt/venv/bin/python"), root_ + "/opt/venv/bin/python");
  EXPECT_EQ(root.strip("/elsewhere"), "");
}

// ld.so.cache entries of another architecture: ldconfig files a 32-bit library that needs no
// libc as plain ELF (flags 1), which i386's ld.so takes and x86-64's does not
// (_dl_cache_check_flags). A 64-bit program that needs that SONAME, with no 64-bit copy, fails
// with "cannot open shared object file", not "wrong ELF class"; with a 64-bit copy in a default
// directory the cache never knew of, it loads that copy. The referee: the program run in a chroot.
TEST(LdCacheFlags, APlainElfEntryIsNotX8664s) {
  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc") || !have_tool("ldconfig"))
    GTEST_SKIP() << "needs root, chroot, gcc and ldconfig";
  TempDir tmp;
  std::string root = tmp / "root", lib64 = root + "/usr/lib/x86_64-linux-gnu";
  // gcc -m32 comes with gcc-multilib (scripts/install-deps.sh --test).
  build_shared(root + "/opt/l32/libflagone.so.1", "int flag_fn(void) { return 1; }",
               "-m32 -nostdlib -Wl,-soname,libflagone.so.1", tmp);
  if (HasFatalFailure()) return;
  std::string own = tmp / "build/libflagone.so.1";
  build_shared(own, "int flag_fn(void) { return 1; }", "-Wl,-soname,libflagone.so.1", tmp);
  build_executable(root + "/prog", "int flag_fn(void);\nint main(void) { return flag_fn() - 1; }\n", quote(own), tmp);
  for (const char* lib : {"ld-linux-x86-64.so.2", "libc.so.6"})
    place(std::string("/lib/x86_64-linux-gnu/") + lib, lib64 + "/" + lib);
  fs::create_directories(root + "/lib64");
  fs::create_symlink("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root + "/lib64/ld-linux-x86-64.so.2");
  tmp.write("root/etc/ld.so.conf", "/opt/l32\n");
  ASSERT_EQ(run("ldconfig -r " + quote(root)).status, 0);
  CommandResult listed = run("ldconfig -r " + quote(root) + " -p");
  ASSERT_NE(listed.out.find("libflagone.so.1 (ELF) => /opt/l32/libflagone.so.1"), std::string::npos) << listed.out;

  auto real = [&] { return run("chroot " + quote(root) + " /prog"); };
  auto predicted = [&] { return run(quote(envdoctor()) + " ldd --root " + quote(root) + " /prog"); };
  CommandResult r = real(), p = predicted();
  ASSERT_EQ(r.status, 127) << r.err;
  EXPECT_EQ(r.err,
            "/prog: error while loading shared libraries: libflagone.so.1: cannot open shared object file: No "
            "such file or directory\n");
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.err.find(r.err), std::string::npos) << p.err;

  // A 64-bit copy the cache does not list, in a default directory: both find it there.
  place(own, lib64 + "/libflagone.so.1");
  EXPECT_EQ(real().status, 0);
  p = predicted();
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("libflagone.so.1 => /usr/lib/x86_64-linux-gnu/libflagone.so.1"), std::string::npos) << p.out;
}

}  // namespace
}  // namespace envdoctor::test
