// Causes before consequences (issue 31, item 5). A wheel's copy of a library is deleted; the
// loader's search for it, by the extension's RUNPATH, finds nothing there and goes on to
// ld.so.cache, where this machine has another copy (the CUDA toolkit's libcudnn.so.9, or
// Debian's libbz2.so.1.0 on any machine), which lacks the symbol the extension calls. The
// import fails with `undefined symbol`; the record check finds the file missing. The undefined
// symbol is a consequence of the missing file: it names it (`caused_by`), takes its fix, the
// summary counts one cause, and `--format nhc` and `prom` name the cause. The referees: the
// real import's message, and the real import again after the fix is pasted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class CausesTest : public VenvTest {
 protected:
  // Whether this machine's ld.so.cache holds `soname` (the copy the search falls through to).
  static bool in_ld_cache(const std::string& soname) {
    return run("/sbin/ldconfig -p 2>/dev/null | awk '{print $1}' | grep -qxF " + quote(soname)).status == 0;
  }

  // `package` ships `dir/soname` (defining `marker`); faketorch 2.8.0's extension faketorch._C
  // calls `marker` and finds the library by RUNPATH $ORIGIN/../`dir`. Installed, imported, then
  // the library deleted.
  void broken_wheel_copy(const Venv& venv, const std::string& package, const std::string& dir,
                         const std::string& soname, const std::string& marker) {
    std::string lib = tmp_ / ("build/wheel/" + soname);
    build_shared(lib, "int " + marker + "(void) { return 9; }", "-Wl,-soname," + soname, tmp_);
    std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
    build_ext(ext, "_C", "int " + marker + "(void);", marker + "()",
              quote(lib) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../" + dir + "'");
    std::string provider = platlib_wheel(package, "9.1.0", {{dir + "/" + soname, lib}});
    std::string torch = platlib_wheel("faketorch", "2.8.0", {{"faketorch/_C" + suffix_, ext}},
                                      {{"faketorch/__init__.py", ""}}, {package});
    venv.install({provider, torch});
    ASSERT_EQ(venv.import("faketorch._C"), "");
    fs::remove(venv.site() + "/" + dir + "/" + soname);
  }

  void expect_cause_first(const std::string& package, const std::string& dir, const std::string& soname,
                          const std::string& marker) {
    if (!in_ld_cache(soname)) GTEST_SKIP() << "ld.so.cache has no " << soname;
    auto venv = venv_with_pip();
    broken_wheel_copy(*venv, package, dir, soname, marker);
    std::string real = venv->import("faketorch._C");
    ASSERT_NE(real.find("undefined symbol: " + marker), std::string::npos) << real;

    int status = -1;
    json report = venv->check(&status);
    EXPECT_EQ(status, 1);
    auto undefined = findings(report, "undefined-symbol");
    auto lost = findings(report, "record-missing-file");
    ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
    ASSERT_EQ(lost.size(), 1u) << report.dump(1);
    EXPECT_EQ(undefined[0]["message"], real);
    std::string missing = venv->site() + "/" + dir + "/" + soname;
    EXPECT_EQ(undefined[0]["caused_by"],
              json({{"code", "record-missing-file"}, {"file", missing}, {"package", package}}));
    EXPECT_FALSE(lost[0].contains("caused_by"));
    // The consequence's fix is the cause's; its hint says how the search fell through.
    ASSERT_TRUE(lost[0].contains("fix_command")) << lost[0].dump(1);
    EXPECT_EQ(undefined[0]["fix_command"], lost[0]["fix_command"]);
    std::string hint = undefined[0]["hint"];
    EXPECT_EQ(hint.find("older or newer"), std::string::npos) << hint;
    EXPECT_NE(hint.find("the loader looked for " + soname + " (needed by _C" + suffix_ + ") in " + venv->site() + "/" +
                        dir + ", where " + package +
                        " 9.1.0's RECORD lists it but the file is missing, so the "
                        "search went on to "),
              std::string::npos)
        << hint;
    EXPECT_NE(hint.find("found by ld.so.cache), which does not define " + marker), std::string::npos) << hint;
    EXPECT_EQ(report["summary"], json({{"errors", 2}, {"warnings", 0}, {"causes", 1}})) << report.dump(1);

    CommandResult nhc = venv->envdoctor_run("check", "--format nhc");
    EXPECT_EQ(nhc.status, 1);
    EXPECT_EQ(nhc.out, "envdoctor: record-missing-file " + dir + "/" + soname + " " + package + "\n");
    CommandResult prom = venv->envdoctor_run("check", "--format prom");
    std::string env = "environment=\"" + venv->python() + "\"";
    EXPECT_NE(prom.out.find("envdoctor_causes{" + env + "} 1\n"), std::string::npos) << prom.out;
    EXPECT_NE(prom.out.find("envdoctor_first_cause_info{" + env + ",code=\"record-missing-file\",subject=\"" + dir +
                            "/" + soname + "\",package=\"" + package + "\"} 1\n"),
              std::string::npos)
        << prom.out;
    EXPECT_LT(prom.out.find("envdoctor_first_cause_info"), prom.out.find("envdoctor_findings{")) << prom.out;

    // For people: the cause's package first, the consequence naming it, the count of causes.
    CommandResult text = venv->envdoctor_run("check", "");
    EXPECT_LT(text.out.find("\n" + package + " (installed by pip)\n  error   record-missing-file\n"),
              text.out.find("\nfaketorch (installed by pip)\n"))
        << text.out;
    EXPECT_NE(text.out.find("  error   undefined-symbol\n    " + venv->site() + "/faketorch/_C" + suffix_ +
                            "\n    caused by: record-missing-file " + missing + " (" + package + ")\n"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("2 errors, 0 warnings (1 cause, 1 consequence)\n"), std::string::npos) << text.out;

    // The cause's fix, pasted as printed, fixes the consequence: the real import works again.
    expect_fix_repairs(*venv, undefined[0]["fix_command"]);
  }

  // `fix`, pasted as printed, succeeds; faketorch._C then imports and check finds nothing.
  static void expect_fix_repairs(const Venv& venv, const json& fix) {
    CommandResult fixed =
        run("cd / && env -u VIRTUAL_ENV PIP_DISABLE_PIP_VERSION_CHECK=1 /bin/sh -c " + quote(fix.get<std::string>()));
    ASSERT_EQ(fixed.status, 0) << fixed.err;
    EXPECT_EQ(venv.import("faketorch._C"), "");
    int status = -1;
    json report = venv.check(&status);
    EXPECT_EQ(status, 0) << report.dump(1);
  }
};

// The case: the CUDA toolkit of this machine puts libcudnn.so.9 in /etc/ld.so.cache.
TEST_F(CausesTest, DeletedCudnnWheelFileFallsThroughToTheSystemCopy) {
  expect_cause_first("nvidia-cudnn-cu12", "nvidia/cudnn/lib", "libcudnn.so.9", "cudnn_wheel_marker");
}

// The same on any Debian machine: libbz2.so.1.0 is in ld.so.cache and not loaded by Python.
TEST_F(CausesTest, DeletedVendoredFileFallsThroughToTheSystemCopy) {
  expect_cause_first("fake-bzip2", "fake_bzip2/lib", "libbz2.so.1.0", "bz2_wheel_marker");
}

// A missing library whose file a RECORD lists is that file's consequence: nothing else to find.
TEST_F(CausesTest, MissingLibraryNamesTheMissingFile) {
  auto venv = venv_with_pip();
  broken_wheel_copy(*venv, "fake-cudnn-cu13", "fakenv/cudnn/lib", "libfakecudnn.so.9", "cudnn_fn");
  std::string real = venv->import("faketorch._C");
  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["message"], real);
  std::string file = venv->site() + "/fakenv/cudnn/lib/libfakecudnn.so.9";
  EXPECT_EQ(missing[0]["caused_by"],
            json({{"code", "record-missing-file"}, {"file", file}, {"package", "fake-cudnn-cu13"}}));
  EXPECT_EQ(missing[0]["fix_command"], findings(report, "record-missing-file")[0]["fix_command"]);
  EXPECT_EQ(report["summary"]["causes"], 1);
  EXPECT_EQ(venv->envdoctor_run("check", "--format nhc").out,
            "envdoctor: record-missing-file fakenv/cudnn/lib/libfakecudnn.so.9 fake-cudnn-cu13\n");
}

// A library two levels down is missing: faketorch._C needs libfakeb.so.1, which needs
// libfakec.so.1, whose file its RECORD lists but is gone; _C calls fakec_fn, which only
// libfakec.so.1 defines. ld.so stops at the missing library and binds nothing, so the import's
// one error is that library; the undefined symbol is its consequence, and the root of the chain
// is the missing file. The referees: the real import, and the import after the fix is pasted.
TEST_F(CausesTest, SymbolsWaitForALibraryMissingFurtherDown) {
  auto venv = venv_with_pip();
  std::string c = tmp_ / "build/wheel/libfakec.so.1", b = tmp_ / "build/wheel/libfakeb.so.1";
  build_shared(c, "int fakec_fn(void) { return 3; }", "-Wl,-soname,libfakec.so.1", tmp_);
  build_shared(b, "int fakeb_fn(void) { return 2; }",
               "-Wl,-soname,libfakeb.so.1 -Wl,--no-as-needed " + quote(c) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN'",
               tmp_);
  std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
  build_ext(ext, "_C", "int fakec_fn(void);", "fakec_fn()",
            "-Wl,--no-as-needed " + quote(b) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../fakeb/lib'");
  std::string provider =
      platlib_wheel("fake-b", "1.0", {{"fakeb/lib/libfakeb.so.1", b}, {"fakeb/lib/libfakec.so.1", c}});
  std::string torch = platlib_wheel("faketorch", "2.8.0", {{"faketorch/_C" + suffix_, ext}},
                                    {{"faketorch/__init__.py", ""}}, {"fake-b"});
  venv->install({provider, torch});
  ASSERT_EQ(venv->import("faketorch._C"), "");
  std::string lost_file = venv->site() + "/fakeb/lib/libfakec.so.1";
  fs::remove(lost_file);
  std::string real = venv->import("faketorch._C");
  ASSERT_NE(real.find("libfakec.so.1: cannot open shared object file"), std::string::npos) << real;

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  auto undefined = findings(report, "undefined-symbol");
  auto lost = findings(report, "record-missing-file");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  ASSERT_EQ(lost.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["message"], real);
  EXPECT_EQ(missing[0]["file"], venv->site() + "/fakeb/lib/libfakeb.so.1");
  // Both follow from the one missing file; the symbol says where the load stops.
  json root = {{"code", "record-missing-file"}, {"file", lost_file}, {"package", "fake-b"}};
  EXPECT_EQ(missing[0]["caused_by"], root);
  EXPECT_EQ(undefined[0]["caused_by"], root);
  EXPECT_EQ(undefined[0]["symbol"], "fakec_fn");
  std::string hint = undefined[0]["hint"];
  EXPECT_EQ(hint.find("older or newer"), std::string::npos) << hint;
  EXPECT_EQ(hint.rfind("ld.so stops at libfakec.so.1 (needed by libfakeb.so.1), which it does not find, before it "
                       "binds fakec_fn, which libfakec.so.1 may define; ",
                       0),
            0u)
      << hint;
  ASSERT_TRUE(lost[0].contains("fix_command")) << lost[0].dump(1);
  EXPECT_EQ(undefined[0]["fix_command"], lost[0]["fix_command"]);
  EXPECT_EQ(report["summary"], json({{"errors", 3}, {"warnings", 0}, {"causes", 1}})) << report.dump(1);

  expect_fix_repairs(*venv, undefined[0]["fix_command"]);
}

}  // namespace
}  // namespace envdoctor::test
