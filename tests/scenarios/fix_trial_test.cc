// Fixes tried on the model before they are offered (issue 49, item 5), and `why` agreeing with
// `check` (item 6). Each case is built for real (gcc, wheels, a venv); the real import is the
// referee, and Venv::check pastes every fix_command left and holds the environment to it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// Whether this CPU's ld.so searches glibc-hwcaps/x86-64-v3 (`ld.so --help`).
bool searches_x86_64_v3() {
  CommandResult r = run("/lib64/ld-linux-x86-64.so.2 --help");
  return r.out.find("x86-64-v3 (supported, searched)") != std::string::npos;
}

class FixTrialTest : public VenvTest {};

// One package ships libhw.so.1 twice: the baseline copy defines hw_new, its glibc-hwcaps
// x86-64-v3 build does not, and ld.so prefers the latter on this CPU. Uninstalling the package
// "so that the other copy is found" would remove the very module it fixes.
TEST_F(FixTrialTest, TwoCopiesInOnePackageNeverGetTheirPackageUninstalled) {
  if (!searches_x86_64_v3()) GTEST_SKIP() << "this CPU's ld.so does not search glibc-hwcaps/x86-64-v3";
  std::string full = tmp_ / "build/full/libhw.so.1", v3 = tmp_ / "build/v3/libhw.so.1";
  build_shared(full, "int hw_fn(void) { return 1; }\nint hw_new(void) { return 2; }\n", "-Wl,-soname,libhw.so.1", tmp_);
  build_shared(v3, "int hw_fn(void) { return 1; }\n", "-Wl,-soname,libhw.so.1", tmp_);
  std::string ext = tmp_ / ("build/hwpkg/_hw" + suffix_);
  build_ext(ext, "_hw", "int hw_new(void);", "hw_new()", quote(full) + " -Wl,-rpath,'$ORIGIN/lib'");
  std::string wheel = module_package("hwpkg",
                                     {{"hwpkg/_hw" + suffix_, ext},
                                      {"hwpkg/lib/libhw.so.1", full},
                                      {"hwpkg/lib/glibc-hwcaps/x86-64-v3/libhw.so.1", v3}},
                                     "_hw");
  auto venv = venv_with_pip();
  venv->install({wheel});
  std::string failed = venv->import("hwpkg._hw");
  ASSERT_NE(failed.find("undefined symbol: hw_new"), std::string::npos) << failed;

  json report = venv->check();
  std::vector<json> undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_EQ(undefined[0]["message"], failed);
  EXPECT_FALSE(undefined[0].contains("fix_command")) << undefined[0].dump(1);
  for (const json& f : report["findings"])
    EXPECT_EQ(f.value("fix_command", "").find("uninstall"), std::string::npos) << f.dump(1);
  std::string hint = undefined[0]["hint"];
  EXPECT_NE(hint.find("both are hwpkg's own, so no uninstall can help"), std::string::npos) << hint;
  // What the hint says to do instead works.
  std::string site = venv->site();
  EXPECT_EQ(venv->import("hwpkg._hw", "LD_PRELOAD=" + site + "/hwpkg/lib/libhw.so.1"), "");
}

// LD_LIBRARY_PATH holds an old libs.so.1 that shadows pa's own (pa's module fails), and the only
// libt.so.1, which pb's module needs. `unset LD_LIBRARY_PATH` fixes pa and breaks pb: tried on
// the model, it is not offered, and the hint says why.
TEST_F(FixTrialTest, UnsetThatBreaksASiblingIsNotOffered) {
  std::string shadow = tmp_ / "ldpath";
  build_shared(tmp_ / "build/pa/libs.so.1", "int s_fn(void) { return 1; }\nint s_new(void) { return 2; }\n",
               "-Wl,-soname,libs.so.1", tmp_);
  build_shared(shadow + "/libs.so.1", "int s_fn(void) { return 1; }\n", "-Wl,-soname,libs.so.1", tmp_);
  build_shared(shadow + "/libt.so.1", "int t_fn(void) { return 3; }\n", "-Wl,-soname,libt.so.1", tmp_);
  std::string a = tmp_ / ("build/pa/_pa" + suffix_), b = tmp_ / ("build/pb/_pb" + suffix_);
  build_ext(a, "_pa", "int s_new(void);", "s_new()", quote(tmp_ / "build/pa/libs.so.1") + " -Wl,-rpath,'$ORIGIN/lib'");
  build_ext(b, "_pb", "int t_fn(void);", "t_fn()", quote(shadow + "/libt.so.1"));
  auto venv = venv_with_pip();
  venv->install({module_package("pa", {{"pa/_pa" + suffix_, a}, {"pa/lib/libs.so.1", tmp_ / "build/pa/libs.so.1"}}),
                 module_package("pb", {{"pb/_pb" + suffix_, b}})});
  std::string variables = "LD_LIBRARY_PATH=" + shadow;
  ASSERT_NE(venv->import("pa._pa", variables).find("undefined symbol: s_new"), std::string::npos);
  ASSERT_EQ(venv->import("pb._pb", variables), "");
  ASSERT_EQ(venv->import("pa._pa"), "");  // the command would fix pa...
  ASSERT_NE(venv->import("pb._pb"), "");  // ...and break pb: the referee agrees with the model

  json report = venv->check(nullptr, "", variables);
  std::vector<json> undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_FALSE(undefined[0].contains("fix_command")) << undefined[0].dump(1);
  std::string hint = undefined[0]["hint"];
  EXPECT_NE(hint.find("no command is offered: `unset LD_LIBRARY_PATH` was tried on the model, and it would bring a "
                      "new error, missing-library in " +
                      venv->site() + "/pb/_pb" + suffix_),
            std::string::npos)
      << hint;
}

// The same shadowing without a sibling that needs the directory: the command fixes, and is offered.
TEST_F(FixTrialTest, UnsetThatHarmsNothingIsOffered) {
  std::string shadow = tmp_ / "ldpath";
  build_shared(tmp_ / "build/pa/libs.so.1", "int s_fn(void) { return 1; }\nint s_new(void) { return 2; }\n",
               "-Wl,-soname,libs.so.1", tmp_);
  build_shared(shadow + "/libs.so.1", "int s_fn(void) { return 1; }\n", "-Wl,-soname,libs.so.1", tmp_);
  std::string a = tmp_ / ("build/pa/_pa" + suffix_);
  build_ext(a, "_pa", "int s_new(void);", "s_new()", quote(tmp_ / "build/pa/libs.so.1") + " -Wl,-rpath,'$ORIGIN/lib'");
  auto venv = venv_with_pip();
  venv->install({module_package("pa", {{"pa/_pa" + suffix_, a}, {"pa/lib/libs.so.1", tmp_ / "build/pa/libs.so.1"}})});
  json report = venv->check(nullptr, "", "LD_LIBRARY_PATH=" + shadow);
  std::vector<json> undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_EQ(undefined[0].value("fix_command", ""), "unset LD_LIBRARY_PATH") << undefined[0].dump(1);
}

// Item 6: a symlink libs.so.12 -> libs.so.13 whose target defines no version libs.so.12, which the
// only module that needs it requires. `why` by name and by path exits 1, as `check` does, and
// names the same error in ld.so's words.
TEST_F(FixTrialTest, WhyAgreesWithCheckOnALibraryLoadedUnderAnotherName) {
  std::string v13 = tmp_.write("v13.map", "libs.so.13 { global: s_fn; local: *; };\n");
  std::string v12 = tmp_.write("v12.map", "libs.so.12 { global: s_fn; local: *; };\n");
  std::string lib13 = tmp_ / "build/rt/libs.so.13", lib12 = tmp_ / "build/12/libs.so.12";
  build_shared(lib13, "int s_fn(void) { return 13; }\n", "-Wl,-soname,libs.so.13 -Wl,--version-script=" + quote(v13),
               tmp_);
  build_shared(lib12, "int s_fn(void) { return 12; }\n", "-Wl,-soname,libs.so.12 -Wl,--version-script=" + quote(v12),
               tmp_);
  std::string ext = tmp_ / ("build/user/_u" + suffix_);
  build_ext(ext, "_u", "int s_fn(void);", "s_fn()", quote(lib12) + " -Wl,-rpath,'$ORIGIN/../rt/lib'");
  auto venv = venv_with_pip();
  venv->install({platlib_wheel("rtpkg", "13.0", {{"rt/lib/libs.so.13", lib13}}),
                 module_package("user", {{"user/_u" + suffix_, ext}}, "_u")});
  std::string link = venv->site() + "/rt/lib/libs.so.12";
  fs::create_symlink("libs.so.13", link);
  std::string failed = venv->import("user._u");
  ASSERT_NE(failed.find("version `libs.so.12' not found"), std::string::npos) << failed;

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  std::vector<json> version = findings(report, "missing-version");
  ASSERT_EQ(version.size(), 1u) << report.dump(1);
  EXPECT_EQ(version[0]["message"], failed);
  for (const std::string& asked : {std::string("libs.so.12"), link}) {
    CommandResult why = venv->envdoctor_run("why", quote(asked));
    EXPECT_EQ(why.status, 1) << asked << "\n" << why.out << why.err;
    EXPECT_NE(why.out.find(failed), std::string::npos) << asked << "\n" << why.out;
  }
  // Item 8: at the terminal's width, the loader's message wraps at its spaces (paths whole).
  CommandResult narrow =
      run("env COLUMNS=80 " + quote(envdoctor()) + " why --python " + quote(venv->python()) + " libs.so.12");
  std::istringstream lines(narrow.out);
  for (std::string line; std::getline(lines, line);) {
    std::string word = line.substr(line.find_first_not_of(' '));
    if (word.find(' ') != std::string::npos) {
      EXPECT_LE(line.size(), 80u) << line;
    }
  }
  EXPECT_NE(narrow.out.find("\n        version `libs.so.12' not found (required by\n"), std::string::npos)
      << narrow.out;
}

// The CuPy corpus for CUDA 12 (tests/real's cupy12, installed by the real uv from the corpus,
// offline): libcusolver.so.11 is CUDA 11's and CUDA 12's, and the fix installs CUDA 12's; the
// CUDA 12 runtime and NVRTC that cupy-cuda12x needs, and does not find, are never to be uninstalled.
TEST(CupyAdvice, FixesFollowTheConsumersCudaMajor) {
  std::string why, uv = pinned_tool("uv", &why);
  if (uv.empty() || corpus_wheel("cupy-cuda12x", &why).empty()) GTEST_SKIP() << why;
  TempDir tmp;
  std::string venv = tmp / "cupy12", cache = "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " ";
  ASSERT_EQ(run(cache + quote(uv) + " venv -q -p python3 " + quote(venv)).status, 0);
  CommandResult installed =
      run(cache + quote(uv) + " pip install -q --offline --no-index --find-links " + quote(corpus_dir()) +
          " --python " + quote(venv + "/bin/python") +
          " cupy-cuda12x==14.2.0 nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvrtc-cu12==12.9.86");
  ASSERT_EQ(installed.status, 0) << installed.err;
  CommandResult r = run(quote(envdoctor()) + " check --json --python " + quote(venv + "/bin/python"));
  ASSERT_EQ(r.status, 1) << r.err;
  json report = json::parse(r.out);
  bool cusolver = false;
  for (const json& f : report["findings"]) {
    std::string fix = f.value("fix_command", ""), hint = f.value("hint", "");
    EXPECT_EQ(fix.find("-cu11"), std::string::npos) << f.dump(1);
    if (f.value("library", "") == "libcusolver.so.11") {
      cusolver = true;
      EXPECT_NE(fix.find(" nvidia-cusolver-cu12"), std::string::npos) << f.dump(1);
    }
    if (f["code"] == "cuda-major-mix") {
      EXPECT_EQ(hint.find("uninstall"), std::string::npos) << hint;
      // cupy's own first use opens nvidia-cuda-nvrtc-cu12's libnvrtc.so.12 (data/package_loads.json),
      // so CUDA 12 is used, not only needed.
      EXPECT_NE(hint.find("CUDA 12 is used by cupy-cuda12x"), std::string::npos) << hint;
    }
  }
  EXPECT_TRUE(cusolver) << r.out;

  // Item 8: `cuda`'s table fits 100 columns (stacked, one package a block, where a table would
  // not), whatever the number of GPUs asked about; only a path alone may be wider.
  CommandResult table = run(quote(envdoctor()) + " cuda --python " + quote(venv + "/bin/python") +
                            " --gpu sm_70 --gpu sm_75 --gpu sm_80 --gpu sm_86 --gpu sm_89 --gpu sm_90 --gpu sm_100");
  ASSERT_EQ(table.status, 0) << table.err;
  std::istringstream lines(table.out);
  for (std::string line; std::getline(lines, line);) {
    bool path_alone = line.find_first_not_of(' ') != std::string::npos && line[line.find_first_not_of(' ')] == '/' &&
                      line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
    if (!path_alone) {
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
  EXPECT_NE(table.out.find("\n  cupy-cuda12x\n    VERSION: 14.2.0\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\n    sm_90: sass\n"), std::string::npos) << table.out;
}

// Item 7: the environment's own cuDNN gone (its package never installed, though required), the
// loader takes the machine's through ld.so.cache: the import works here, and ld.so without the
// cache (a container, another node) does not find it. system-copy-stands-in says so.
TEST_F(FixTrialTest, ACopyOutsideTheEnvironmentStandingInIsSaid) {
  CommandResult cache = run("/sbin/ldconfig -p");
  const std::string entry = "\tlibcudnn.so.9 (libc6,x86-64) => ";
  size_t at = cache.out.find(entry);
  if (at == std::string::npos) GTEST_SKIP() << "ld.so.cache has no libcudnn.so.9";
  at += entry.size();
  std::string system_copy = cache.out.substr(at, cache.out.find('\n', at) - at);
  std::string stub = tmp_ / "build/stub/libcudnn.so.9";
  build_shared(stub, "int cudnn_stub(void) { return 0; }", "-Wl,-soname,libcudnn.so.9", tmp_);
  std::string ext = tmp_ / ("build/cudnnuser/_c" + suffix_);
  build_ext(ext, "_c", "", "0", "-Wl,--no-as-needed " + quote(stub) + " -Wl,-rpath,'$ORIGIN/../nvidia/cudnn/lib'");
  auto venv = venv_with_pip();
  venv->install({platlib_wheel("cudnnuser", "1.0", {{"cudnnuser/_c" + suffix_, ext}}, {{"cudnnuser/__init__.py", ""}},
                               {"nvidia-cudnn-cu13==9.19.0.56"})});
  ASSERT_EQ(venv->import("cudnnuser._c"), "");  // it loads here...
  std::string module = venv->site() + "/cudnnuser/_c" + suffix_;
  CommandResult elsewhere = run("/lib64/ld-linux-x86-64.so.2 --inhibit-cache --list " + quote(module));
  EXPECT_NE(elsewhere.err.find("libcudnn.so.9: cannot open shared object file"), std::string::npos)
      << elsewhere.err;  // ...and not where that copy is absent

  json report = venv->check();
  std::vector<json> stands = findings(report, "system-copy-stands-in");
  ASSERT_EQ(stands.size(), 1u) << report.dump(1);
  EXPECT_EQ(stands[0]["severity"], "warning");
  EXPECT_EQ(stands[0]["file"], module);
  EXPECT_EQ(stands[0]["library"], "libcudnn.so.9");
  EXPECT_EQ(stands[0]["package"], "cudnnuser");
  std::string message = stands[0]["message"];
  EXPECT_EQ(message.rfind("libcudnn.so.9 loads from " + fs::path(system_copy).lexically_normal().string(), 0), 0u)
      << message;
  EXPECT_NE(message.find("outside the environment: nvidia-cudnn-cu13, which ships it, is not installed"),
            std::string::npos)
      << message;
  // The release cudnnuser requires, from the index.
  EXPECT_EQ(stands[0].value("fix_command", ""), venv->python() + " -m pip install nvidia-cudnn-cu13==9.19.0.56");
}

// Item 7: in a --system-site-packages venv over Debian's python3, an extension needs libc10.so,
// which python3-torch ships as /usr/lib/python3/dist-packages/torch/lib/libc10.so (a link into
// /usr/lib, so no ELF file of the index): the hint names the file and its Debian package, as dpkg
// lists them, where it said that no installed package provides it.
TEST(DebianFiles, ALibraryADebianPackageShipsIsNamedWithItsPackage) {
  const std::string debian_lib = "/usr/lib/python3/dist-packages/torch/lib/libc10.so";
  CommandResult owner = run("dpkg -S " + debian_lib);
  if (owner.status != 0 || owner.out.rfind("python3-torch: ", 0) != 0 || !have_tool("gcc"))
    GTEST_SKIP() << "needs gcc and Debian's python3-torch (scripts/install-deps.sh --test)";
  CommandResult include = run("/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"include\"])'");
  std::string inc = include.out.substr(0, include.out.find('\n'));
  if (!fs::exists(inc + "/Python.h")) GTEST_SKIP() << "needs Debian's python3-dev";
  TempDir tmp;
  std::string venv = tmp / "v";
  ASSERT_EQ(run("/usr/bin/python3 -m venv --without-pip --system-site-packages " + quote(venv)).status, 0);
  CommandResult site =
      run(quote(venv + "/bin/python") + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'");
  std::string sp = site.out.substr(0, site.out.find('\n'));
  CommandResult suffix = run("/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))'");
  // A stub with the SONAME of pip's torch builds (libc10.so) to link against.
  build_shared(tmp / "stub/libc10.so", "int c10_stub(void) { return 0; }\n", "-Wl,-soname,libc10.so", tmp);
  fs::create_directories(sp + "/ext");
  std::string ext = sp + "/ext/_e" + suffix.out.substr(0, suffix.out.find('\n'));
  build_shared(ext, extension_source("_e", "", "0"),
               "-I" + quote(inc) + " -Wl,--no-as-needed " + quote(tmp / "stub/libc10.so"), tmp);
  std::ofstream(sp + "/ext/__init__.py").close();
  std::string failed = import_error(run("cd / && " + quote(venv + "/bin/python") + " -c 'import ext._e'"));
  ASSERT_EQ(failed, "libc10.so: cannot open shared object file: No such file or directory");

  CommandResult r = run(quote(envdoctor()) + " check --json --python " + quote(venv + "/bin/python"));
  ASSERT_EQ(r.status, 1) << r.err;
  json report = json::parse(r.out);
  std::vector<json> missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["message"], failed);
  std::string hint = missing[0]["hint"];
  EXPECT_EQ(hint.rfind("libc10.so is " + debian_lib + ", shipped by the Debian package python3-torch ", 0), 0u) << hint;
  EXPECT_FALSE(missing[0].contains("fix_command"));
}

}  // namespace
}  // namespace envdoctor::test
