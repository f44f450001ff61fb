// Fixes that work when pasted (issue 18's trial). A venv holds two locally built wheels: provlib,
// which ships libprov.so.1, and consumer, whose extension module links it through RUNPATH
// $ORIGIN/../provlib/lib and whose METADATA says Requires-Dist: provlib. Each error's
// `fix_command` is run exactly as printed, by /bin/sh, from another directory, with no venv
// active; then the environment is checked again and the real import is the referee.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

size_t errors(const json& report) {
  size_t n = 0;
  for (const json& f : report["findings"]) n += f["severity"] == "error";
  return n;
}

class FixTest : public VenvTest {
 protected:
  // provlib VERSION: libprov.so.1 defining prov_add, and prov_mul from 2.0 on.
  std::string provlib(const std::string& version, const std::string& out_dir) {
    std::string lib = tmp_ / ("build/provlib-" + version + "/libprov.so.1");
    std::string source = "int prov_add(int a, int b) { return a + b; }\n";
    if (version != "1.0") source += "int prov_mul(int a, int b) { return a * b; }\n";
    build_shared(lib, source, "-Wl,-soname,libprov.so.1", tmp_);
    return make_wheel(out_dir, {{"name", "provlib"},
                                {"version", version},
                                {"tag", "py3-none-manylinux_2_17_x86_64"},
                                {"purelib", false},
                                {"files", {{"provlib/__init__.py", ""}}},
                                {"paths", {{"provlib/lib/libprov.so.1", lib}}}});
  }
  // consumer VERSION: consumer._ext calls prov_add (1.0) or prov_mul (2.0), built against
  // provlib 1.0 or 2.0, found through RUNPATH $ORIGIN/../provlib/lib.
  std::string consumer(const std::string& version, const std::string& requirement, const std::string& out_dir) {
    bool two = version != "1.0";
    std::string dir = tmp_ / ("build/provlib-" + std::string(two ? "2.0" : "1.0"));
    std::string ext = tmp_ / ("build/consumer-" + version + "/_ext" + suffix_);
    build_ext(ext, "_ext", two ? "int prov_mul(int, int);" : "int prov_add(int, int);",
              two ? "prov_mul(2, 3)" : "prov_add(2, 3)",
              quote(dir + "/libprov.so.1") + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../provlib/lib'");
    return make_wheel(out_dir, {{"name", "consumer"},
                                {"version", version},
                                {"tag", "cp311-cp311-linux_x86_64"},
                                {"purelib", false},
                                {"requires", {requirement}},
                                {"files", {{"consumer/__init__.py", ""}}},
                                {"paths", {{"consumer/_ext" + suffix_, ext}}}});
  }
  // pip installing NAMES from the test's own index (a --find-links directory), as a user's
  // pip.conf would give it: pip then records no direct_url.json.
  void install_from_index(const Venv& venv, const std::string& index, const std::string& names) {
    CommandResult r = run("python3 -m pip --python " + quote(venv.python()) + " install --no-index --find-links " +
                          quote(index) + " --no-deps --disable-pip-version-check -q " + names);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // The fix, pasted: /bin/sh runs it as printed, from another directory, without VIRTUAL_ENV and
  // with no venv on PATH; the index (when one is needed) comes from pip's environment variables.
  void paste(const std::string& command, const std::string& index = "") {
    ASSERT_FALSE(command.empty());
    fs::create_directories(tmp_ / "elsewhere");
    std::string env = "env -u VIRTUAL_ENV PIP_DISABLE_PIP_VERSION_CHECK=1";
    if (!index.empty()) env += " PIP_NO_INDEX=1 PIP_FIND_LINKS=" + quote(index);
    CommandResult r = run("cd " + quote(tmp_ / "elsewhere") + " && " + env + " /bin/sh -c " + quote(command));
    ASSERT_EQ(r.status, 0) << command << "\n" << r.out << r.err;
  }
  // Checked again after a fix: no error left, and the import works.
  void expect_fixed(const Venv& venv, const std::string& module = "consumer._ext") {
    int status = -1;
    json after = venv.check(&status);
    EXPECT_EQ(status, 0) << after.dump(1);
    EXPECT_EQ(errors(after), 0u) << after.dump(1);
    EXPECT_EQ(venv.import(module), "");
  }
};

// A local wheel: pip recorded file:///.../provlib-1.0-...whl in direct_url.json, so the fix
// installs that file again, into this venv by its interpreter, never provlib==1.0 from an index.
TEST_F(FixTest, LocalWheelIsReinstalledFromItsFile) {
  std::string prov = provlib("1.0", tmp_ / "wheels");
  std::string cons = consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  venv.install({prov, cons});
  ASSERT_EQ(venv.import("consumer._ext"), "");
  fs::remove(venv.site() + "/provlib/lib/libprov.so.1");
  ASSERT_NE(venv.import("consumer._ext"), "");

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  std::string fix = missing[0]["fix_command"];
  EXPECT_EQ(fix, "python3 -m pip --python " + venv.python() + " install --force-reinstall --no-deps " + prov);
  EXPECT_NE(missing[0]["hint"].get<std::string>().find("reinstall provlib 1.0 from " + prov), std::string::npos)
      << missing[0]["hint"];
  auto lost = findings(report, "record-missing-file");
  ASSERT_EQ(lost.size(), 1u) << report.dump(1);
  EXPECT_EQ(lost[0]["fix_command"], fix);

  // The text report: the hint on its own lines, the command on its own `fix:` line.
  CommandResult text = venv.envdoctor_run("check", "");
  EXPECT_NE(text.out.find("\n    fix: " + fix + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n    hint: "), std::string::npos) << text.out;

  paste(fix);
  expect_fixed(venv);
}

// An index install: no direct_url.json, so the index is assumed, and the command carries no
// --find-links of its own (the user's pip configuration says where the index is).
TEST_F(FixTest, IndexInstallIsReinstalledByPin) {
  provlib("1.0", tmp_ / "wheels");
  consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  ASSERT_FALSE(fs::exists(venv.site() + "/provlib-1.0.dist-info/direct_url.json"));
  fs::remove(venv.site() + "/provlib/lib/libprov.so.1");

  json report = venv.check();
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["fix_command"],
            "python3 -m pip --python " + venv.python() + " install --force-reinstall --no-deps provlib==1.0");

  // `why libprov.so.1`: not found is a failure (status 1), and the finding says why.
  CommandResult why = venv.envdoctor_run("why", "libprov.so.1");
  EXPECT_EQ(why.status, 1) << why.out << why.err;
  EXPECT_NE(why.out.find("=> not found"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("error missing-library"), std::string::npos) << why.out;

  paste(missing[0]["fix_command"], tmp_ / "wheels");
  expect_fixed(venv);
  EXPECT_EQ(venv.envdoctor_run("why", "libprov.so.1").status, 0);
}

// After `pip uninstall provlib`: consumer's METADATA requires provlib, and its RUNPATH looks in
// provlib's directory. The fix installs the requirement as consumer states it.
TEST_F(FixTest, RemovedProviderIsNamedFromRequiresDist) {
  provlib("1.0", tmp_ / "wheels");
  consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  venv.uninstall("provlib");

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["hint"],
            "consumer 1.0 requires provlib, which is not installed; it provided libprov.so.1; consumer looks for it "
            "in ../provlib/lib");
  EXPECT_EQ(missing[0]["fix_command"], "python3 -m pip --python " + venv.python() + " install provlib");

  // `why provlib`: not installed, but required; what its absence breaks, and status 1.
  CommandResult why = venv.envdoctor_run("why", "provlib");
  EXPECT_EQ(why.status, 1) << why.out << why.err;
  EXPECT_EQ(why.out.rfind("provlib is not installed\n  required by:\n    consumer 1.0 (provlib)\n", 0), 0u) << why.out;
  EXPECT_NE(why.out.find("error missing-library"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("      fix: " + missing[0]["fix_command"].get<std::string>() + "\n"), std::string::npos)
      << why.out;

  paste(missing[0]["fix_command"], tmp_ / "wheels");
  expect_fixed(venv);
}

// A consumer from a local wheel says nothing about where its requirement comes from: no index
// command is made up for it.
TEST_F(FixTest, NoIndexIsAssumedForALocalConsumersRequirement) {
  std::string prov = provlib("1.0", tmp_ / "wheels");
  std::string cons = consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  venv.install({prov, cons});
  venv.uninstall("provlib");
  json report = venv.check();
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_FALSE(missing[0].contains("fix_command")) << missing[0].dump();
  EXPECT_NE(missing[0]["hint"].get<std::string>().find("consumer was not installed from an index"), std::string::npos)
      << missing[0]["hint"];
}

// `check --without provlib`: the simulation itself removes the file, and says so; nothing to
// paste (the fix is not to make the change). The header names the scenario.
TEST_F(FixTest, WithoutSaysTheChangeRemovesTheProvider) {
  provlib("1.0", tmp_ / "wheels");
  consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  int status = -1;
  json report = venv.check(&status, "--without provlib");
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["hint"],
            "libprov.so.1 comes from provlib 1.0, which this change removes; consumer 1.0 requires provlib: keep "
            "provlib");
  EXPECT_FALSE(missing[0].contains("fix_command"));
  EXPECT_EQ(report["change"]["removed"], json::array({"provlib 1.0"}));
  EXPECT_EQ(report["change"]["new_errors"], 1);

  CommandResult text = venv.envdoctor_run("check", "--without provlib");
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("\nwhat if: \u2212provlib 1.0\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n1 new error (0 already there)\n"), std::string::npos) << text.out;
  // The real uninstall agrees.
  venv.uninstall("provlib");
  EXPECT_NE(venv.import("consumer._ext"), "");
}

// consumer 2.0 calls prov_mul, which provlib 2.0 added; provlib 1.0 is installed. The hint names
// the library searched, what it lacks, the versions, and both ways out; the command upgrades the
// provider as consumer's requirement states.
TEST_F(FixTest, UndefinedSymbolSaysWhereItLookedAndBothWaysOut) {
  provlib("1.0", tmp_ / "wheels");
  fs::create_directories(tmp_ / "wheels2");
  provlib("2.0", tmp_ / "wheels2");
  consumer("2.0", "provlib>=2.0", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  ASSERT_NE(venv.import("consumer._ext").find("undefined symbol: prov_mul"), std::string::npos);

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_EQ(undefined[0]["hint"],
            "prov_mul is not in libprov.so.1 (provlib 1.0), which consumer 2.0 links; consumer requires "
            "provlib>=2.0, not 1.0; either upgrade provlib; or install a build of consumer made for provlib 1.0 (test "
            "it with `envdoctor check --python " +
                venv.python() + " --with WHEEL`)");
  EXPECT_EQ(undefined[0]["fix_command"],
            "python3 -m pip --python " + venv.python() + " install --upgrade 'provlib>=2.0'");

  // `why consumer` shows the unbound symbol, not only where its libraries resolve; status 1.
  CommandResult why = venv.envdoctor_run("why", "consumer");
  EXPECT_EQ(why.status, 1) << why.out << why.err;
  EXPECT_NE(why.out.find("error undefined-symbol prov_mul"), std::string::npos) << why.out;

  // The text report keeps to the terminal's width (104 columns where it is no terminal and
  // COLUMNS is unset; COLUMNS=80 below): hints, the loader's messages and notes wrap at spaces,
  // and only a path alone, or the command to be pasted, is wider.
  for (const char* columns : {"", "80"}) {
    size_t width = *columns ? 80 : 104;
    CommandResult text = run(std::string(*columns ? "env COLUMNS=80 " : "env -u COLUMNS ") + quote(envdoctor()) +
                             " check --python " + quote(venv.python()));
    std::istringstream lines(text.out);
    size_t hint_lines = 0;
    for (std::string line; std::getline(lines, line);) {
      std::string word =
          line.substr(line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' '));
      // A path alone, the fix, and a command in backticks (to be pasted whole) may be wider.
      bool alone = word.find(' ') == std::string::npos || word.rfind("fix: ", 0) == 0 || word.rfind("`", 0) == 0;
      if (!alone) EXPECT_LE(line.size(), width) << line;
      if (line.rfind("    hint: ", 0) == 0 || line.rfind("          ", 0) == 0) ++hint_lines;
    }
    EXPECT_GE(hint_lines, 3u) << text.out;
  }

  // The way out, tried first as a what-if: provlib 2.0 fixes the one error and brings none.
  std::string wheel2 = tmp_ / "wheels2/provlib-2.0-py3-none-manylinux_2_17_x86_64.whl";
  json preview = venv.check(&status, "--with " + quote(wheel2));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(preview["change"]["added"], json::array({"provlib 2.0 (wheel)"}));
  EXPECT_EQ(preview["change"]["removed"], json::array({"provlib 1.0"}));
  EXPECT_EQ(preview["change"]["fixed_errors"], 1);
  EXPECT_EQ(preview["change"]["new_errors"], 0);
  CommandResult what_if = venv.envdoctor_run("check", "--with " + quote(wheel2));
  EXPECT_NE(what_if.out.find("\nwhat if: +provlib 2.0 (wheel), \u2212provlib 1.0\n"), std::string::npos) << what_if.out;
  EXPECT_NE(what_if.out.find("\n0 new errors (0 already there); this change fixes 1 error\n"), std::string::npos)
      << what_if.out;

  paste(undefined[0]["fix_command"], tmp_ / "wheels2");
  expect_fixed(venv);
}

// Issue 26, item 7b: an unpinned requirement, and an index whose newest provlib is the installed
// one. The fix asks for a newer provlib than the installed 1.0, so that pasted where no such
// release exists it fails (pip's "No matching distribution") and changes nothing, where
// `--upgrade provlib` would say nothing and succeed; once provlib 2.0 is on the index, the same
// command repairs the environment.
TEST_F(FixTest, UpgradeFixFailsWhereNoNewerReleaseExists) {
  provlib("1.0", tmp_ / "wheels");
  fs::create_directories(tmp_ / "build/later");
  provlib("2.0", tmp_ / "build/later");  // built, not yet published
  consumer("2.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  ASSERT_NE(venv.import("consumer._ext").find("undefined symbol: prov_mul"), std::string::npos);
  json report = venv.check();
  auto undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  std::string fix = undefined[0]["fix_command"];
  EXPECT_EQ(fix, "python3 -m pip --python " + venv.python() + " install --upgrade 'provlib>1.0'");

  fs::create_directories(tmp_ / "elsewhere");
  std::string env = "env -u VIRTUAL_ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 PIP_FIND_LINKS=";
  CommandResult r =
      run("cd " + quote(tmp_ / "elsewhere") + " && " + env + quote(tmp_ / "wheels") + " /bin/sh -c " + quote(fix));
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("No matching distribution found for provlib>1.0"), std::string::npos) << r.err;
  EXPECT_NE(venv.import("consumer._ext").find("undefined symbol: prov_mul"), std::string::npos);

  fs::copy(tmp_ / "build/later/provlib-2.0-py3-none-manylinux_2_17_x86_64.whl", tmp_ / "wheels");
  paste(fix, tmp_ / "wheels");
  expect_fixed(venv);
}

// A what-if on an environment with an old error: it is there before and after, and the change
// brings none, so the status is 0 and the summary says why.
TEST_F(FixTest, WhatIfCountsOldErrorsApart) {
  provlib("1.0", tmp_ / "wheels");
  consumer("1.0", "provlib", tmp_ / "wheels");
  std::string tiny = make_wheel(tmp_ / "wheels",
                                {{"name", "tinypure"}, {"version", "0.1"}, {"files", {{"tinypure/__init__.py", ""}}}});
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "provlib consumer");
  fs::remove(venv.site() + "/provlib/lib/libprov.so.1");
  CommandResult text = venv.envdoctor_run("check", "--with " + quote(tiny));
  EXPECT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("\nwhat if: +tinypure 0.1 (wheel)\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n0 new errors (2 already there)\n"), std::string::npos) << text.out;
}

// Two wheels install one path (file-owned-twice). The fix fills in both names: keep the one
// faketorch requires, uninstall the other, reinstall the kept one. Then the clobbered case:
// uninstalling the other first deleted the file for both, and reinstalling restores it.
TEST_F(FixTest, FileOwnedTwiceAndClobberedFileRoundTrips) {
  two_owners_wheels();
  Venv venv(tmp_, "v");
  install_from_index(venv, tmp_ / "wheels", "fake-cudnn-cu12 fake-cudnn-cu13 faketorch");
  json report = venv.check();
  auto twice = findings(report, "file-owned-twice");
  ASSERT_EQ(twice.size(), 1u) << report.dump(1);
  std::string pip = "python3 -m pip --python " + venv.python();
  EXPECT_EQ(twice[0]["fix_command"], pip + " uninstall -y fake-cudnn-cu12 && " + pip +
                                         " install --force-reinstall --no-deps fake-cudnn-cu13==9.1");
  EXPECT_NE(twice[0]["hint"].get<std::string>().find("keep only fake-cudnn-cu13 (uninstall fake-cudnn-cu12"),
            std::string::npos)
      << twice[0]["hint"];
  paste(twice[0]["fix_command"], tmp_ / "wheels");
  json after = venv.check();
  EXPECT_TRUE(findings(after, "file-owned-twice").empty()) << after.dump(1);
  expect_fixed(venv, "faketorch._C");

  // Clobbered: both installed again, then the other one uninstalled.
  install_from_index(venv, tmp_ / "wheels", "fake-cudnn-cu12");
  venv.uninstall("fake-cudnn-cu12");
  ASSERT_NE(venv.import("faketorch._C"), "");
  json lost = venv.check();
  auto missing = findings(lost, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << lost.dump(1);
  EXPECT_EQ(missing[0]["fix_command"], pip + " install --force-reinstall --no-deps fake-cudnn-cu13==9.1");
  paste(missing[0]["fix_command"], tmp_ / "wheels");
  expect_fixed(venv, "faketorch._C");
}

// uv wrote INSTALLER and direct_url.json: the fix is uv's command for this interpreter, from the
// recorded wheel (uv cannot run here, so the text is what is checked).
TEST_F(FixTest, UvInstalledWheelGetsUvsCommandFromItsOrigin) {
  std::string prov = provlib("1.0", tmp_ / "wheels");
  std::string cons = consumer("1.0", "provlib", tmp_ / "wheels");
  Venv venv(tmp_, "v");
  venv.install({prov, cons});
  std::ofstream(venv.site() + "/provlib-1.0.dist-info/INSTALLER") << "uv\n";
  fs::remove(venv.site() + "/provlib/lib/libprov.so.1");
  json report = venv.check();
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["fix_command"], "uv pip install --python " + venv.python() + " --reinstall --no-deps " + prov);
}

}  // namespace
}  // namespace envdoctor::test
