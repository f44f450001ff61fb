// Issue 18's trial, items 6-8: a new user's mistakes get a clear message and exit status 2
// (DESIGN.md), `ldd`/`tree` judge a CPython extension module as `import` loads it, and
// record-missing-file is an error only for what an import runs. Each case is what the trial saw,
// with the referee that decides it: a real import, the real interpreter, real pip.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>

#include "checks/finding.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// ---- input errors: one line on stderr, exit 2 ----

TEST(UserMistakes, PythonThatIsNotAnInterpreterSaysSoWithoutTheProbeScript) {
  // Was: the whole probe script, shell-quoted, then "File name too long" (ls -c SCRIPT).
  CommandResult r = run(quote(envdoctor()) + " check --python /bin/ls");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "envdoctor: /bin/ls is not a Python interpreter (it did not answer envdoctor's probe: exit status 2)\n");
  // A program that exits 0 and echoes its input back is not taken for Python either (cat itself
  // refuses the probe's -S: exit status 1).
  TempDir tmp;
  std::string echo = tmp.write("echo-back", "#!/bin/sh\nexec cat\n");
  ::chmod(echo.c_str(), 0755);
  r = run(quote(envdoctor()) + " check --python " + quote(echo));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: " + echo + " is not a Python interpreter (it did not answer envdoctor's probe)\n");
  r = run(quote(envdoctor()) + " check --python /bin/cat");
  EXPECT_EQ(r.err,
            "envdoctor: /bin/cat is not a Python interpreter (it did not answer envdoctor's probe: exit status 1)\n");
}

// Issue 26, item 9: --python takes an environment's directory as pip's own --python does (its
// bin/python), relative to the current directory with or without "./"; a directory that is no
// environment is told to use --prefix. The referee: the header names the interpreter the venv's
// pip would run, and pip accepts the same argument.
TEST(UserMistakes, PythonThatIsAnEnvironmentDirectoryIsItsInterpreter) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  Venv venv(tmp, "v1");
  std::string dir = tmp / "v1";
  for (const std::string& arg : {dir, std::string("v1"), std::string("./v1")}) {
    SCOPED_TRACE(arg);
    CommandResult r = run("cd " + quote(tmp.path().string()) + " && " + quote(envdoctor()) + " check --python " + arg);
    EXPECT_EQ(r.status, 0) << r.err;
    std::string first = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(first.rfind(dir + "/bin/python (Python ", 0), 0u) << r.out;
    if (python3_facts().pip) {
      CommandResult pip = run("cd " + quote(tmp.path().string()) + " && python3 -m pip --python " + arg +
                              " --disable-pip-version-check list");
      EXPECT_EQ(pip.status, 0) << pip.err;
    }
  }
  fs::create_directories(tmp / "notanenv");
  CommandResult r = run(quote(envdoctor()) + " check --python " + quote(tmp / "notanenv"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: --python " + tmp / "notanenv" + " is a directory with no bin/python: use --prefix " +
                       tmp / "notanenv" + " to read it without running anything\n");
  EXPECT_EQ(run(quote(envdoctor()) + " check --prefix " + quote(dir)).status, 0);
  r = run(quote(envdoctor()) + " check --python " + quote(tmp / "nowhere"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: --python " + tmp / "nowhere" + ": no such file\n");
}

TEST(UserMistakes, MissingWheelIsNamedAsMissing) {
  // Was: "a wheel name has 5 or 6 parts", after a whole check of the environment.
  TempDir tmp;
  CommandResult r = run("cd " + quote(tmp.path().string()) + " && " + quote(envdoctor()) + " check --with nope.whl");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: --with nope.whl: no such file\n");
  fs::create_directories(tmp / "dist");
  r = run(quote(envdoctor()) + " check --with " + quote(tmp / "dist"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: --with " + tmp / "dist" + ": a directory, not a wheel file\n");
}

TEST(UserMistakes, LddOnSomethingThatIsNotAnElfFileIsTheToolsFailure) {
  // Was: exit 1 and glibc's words ("cannot read file data: Is a directory", "invalid ELF header"),
  // where a file that does not exist is exit 2.
  TempDir tmp;
  std::string script = tmp.write("run.sh", "#!/bin/sh\necho hello\n");
  fs::create_directories(tmp / "dir");
  for (const char* command : {"ldd", "tree"}) {
    CommandResult r = run(quote(envdoctor()) + " " + command + " " + quote(tmp / "dir"));
    EXPECT_EQ(r.status, 2) << command;
    EXPECT_EQ(r.err, "envdoctor: " + tmp / "dir" + " is a directory, not an ELF file\n") << command;
    r = run(quote(envdoctor()) + " " + command + " " + quote(script));
    EXPECT_EQ(r.status, 2) << command;
    EXPECT_EQ(r.err, "envdoctor: " + script + " is not an ELF file (a script or data file has no libraries to load)\n")
        << command;
    r = run(quote(envdoctor()) + " " + command + " /dev/null");
    EXPECT_EQ(r.status, 2) << command;
    EXPECT_EQ(r.err, "envdoctor: /dev/null is not a regular file\n") << command;
  }
  // The referee agrees that none of them is a program ld.so can load.
  if (fs::exists("/lib64/ld-linux-x86-64.so.2")) {
    CommandResult real = run("/lib64/ld-linux-x86-64.so.2 --list " + quote(script));
    EXPECT_NE(real.status, 0) << real.out;
  }
}

TEST(UserMistakes, GpuBeyondAnyArchitectureIsRefused) {
  CommandResult r = run(quote(envdoctor()) + " check --gpu sm_999 --python /nonexistent");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "envdoctor: --gpu sm_999: compute capability 99.9 is beyond any GPU: the newest this envdoctor knows is "
            "12.1\n");
  r = run(quote(envdoctor()) + " cuda --gpu sm_29 --python /nonexistent");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: --gpu sm_29: compute capability 2.9 is not a GPU NVIDIA has made\n");
  // Real GPUs old and new, and one newer than the table (judged "unknown"), are taken: the
  // failure is then the next one, the missing interpreter.
  for (const char* gpu : {"sm_70", "sm_35", "sm_90a", "8.6", "sm_101", "sm_130"}) {
    r = run(quote(envdoctor()) + " check --gpu " + gpu + " --python /nonexistent");
    EXPECT_EQ(r.err, "envdoctor: --python /nonexistent: no such file\n") << gpu;
  }
}

// no-color.org: "when present and not an empty string" NO_COLOR disables colour; on a terminal
// (script(1) gives the command's stdout one; stderr, with its progress line, is left out) an
// empty NO_COLOR leaves it on.
TEST(UserMistakes, OnlyANonEmptyNoColorTurnsColourOff) {
  if (!have_tool("script") || !have_tool("python3")) GTEST_SKIP() << "needs script(1) and python3";
  TempDir tmp;
  Venv venv(tmp, "venv");
  auto on_terminal = [&](const std::string& env) {
    std::string command =
        "env " + env + " " + quote(envdoctor()) + " check --prefix " + quote(tmp / "venv") + " 2>/dev/null";
    return run("script -qec " + quote(command) + " /dev/null").out;
  };
  EXPECT_NE(on_terminal("NO_COLOR=").find("\x1b["), std::string::npos);
  EXPECT_NE(on_terminal("-u NO_COLOR").find("\x1b["), std::string::npos);
  EXPECT_EQ(on_terminal("NO_COLOR=1").find("\x1b["), std::string::npos);
}

// ---- help: typed placeholders and examples ----

TEST(UserMistakes, EveryHelpHasTypedPlaceholdersAndExamples) {
  for (const char* command : {"check", "why", "ldd", "tree", "cuda", "snapshot", "diff", "wheel-tag", "explain"}) {
    CommandResult r = run(quote(envdoctor()) + " " + command + " --help");
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_EQ(r.out.find("TEXT"), std::string::npos) << command << "\n" << r.out;
    EXPECT_NE(r.out.find("\nExamples:\n  envdoctor " + std::string(command)), std::string::npos) << r.out;
  }
  std::string help = run(quote(envdoctor()) + " check --help").out;
  for (const char* typed : {"--python EXE", "--prefix DIR", "--with WHEEL", "--without PKG", "--root DIR",
                            "--output FILE", "--gpu SM", "--driver VERSION"})
    EXPECT_NE(help.find(typed), std::string::npos) << typed << "\n" << help;
}

// ---- ldd and tree on a CPython extension module ----

class ExtensionLdd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(json_ext_) || !fs::exists("/usr/bin/python3.11"))
      GTEST_SKIP() << "needs Debian's python3.11 and its lib-dynload/_json";
  }
  const std::string json_ext_ = "/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so";
};

TEST_F(ExtensionLdd, HealthyStdlibExtensionIsBoundByItsInterpreter) {
  // The referee: the interpreter imports it.
  ASSERT_EQ(run("/usr/bin/python3.11 -c 'import _json'").status, 0);
  // Plain ldd, as glibc's, binds no symbol: nothing to say about the Py* references.
  CommandResult plain = run(quote(envdoctor()) + " ldd " + quote(json_ext_));
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(plain.out.find("symbols"), std::string::npos) << plain.out;
  // -r --exact is `ldd -r`: every Py* reference unbound, exit 1 (the trial's ~60 lines).
  CommandResult exact = run(quote(envdoctor()) + " ldd -r --exact " + quote(json_ext_));
  EXPECT_EQ(exact.status, 1);
  size_t unbound = count(exact.err, "undefined symbol: ");
  ASSERT_GT(unbound, 20u) << exact.err;
  EXPECT_EQ(unbound, count(exact.err, "undefined symbol: Py") + count(exact.err, "undefined symbol: _Py"));
  // As an import: bound by the interpreter, exit 0, one line that says so.
  for (const char* command : {"ldd", "tree"}) {
    CommandResult r = run(quote(envdoctor()) + " " + command + " -r --python /usr/bin/python3.11 " + quote(json_ext_));
    EXPECT_EQ(r.status, 0) << command << "\n" << r.err;
    EXPECT_EQ(r.err, "") << command;
    EXPECT_NE(r.out.find("\t" + std::to_string(unbound) +
                         " symbols of the Python C API bound by /usr/bin/python3.11, as at import\n"),
              std::string::npos)
        << command << "\n"
        << r.out;
  }
  // The default rules find the interpreter too (python3 on PATH, here Debian's 3.11).
  CommandResult by_default = run("env -u VIRTUAL_ENV -u CONDA_PREFIX -u ENVDOCTOR_PYTHON PATH=/usr/bin " +
                                 quote(envdoctor()) + " ldd -r " + quote(json_ext_));
  EXPECT_EQ(by_default.status, 0) << by_default.err;
  EXPECT_NE(by_default.out.find(" bound by /usr/bin/python3.11, as at import\n"), std::string::npos) << by_default.out;
  // A default that is a script (a pyenv shim) or another version gives way to python3.11 on PATH.
  TempDir tmp;
  std::string shim = tmp.write("bin/python3", "#!/bin/sh\nexec /usr/bin/python3.11 \"$@\"\n");
  fs::permissions(shim, fs::perms::owner_all);
  CommandResult shimmed = run("env -u VIRTUAL_ENV -u CONDA_PREFIX -u ENVDOCTOR_PYTHON PATH=" + tmp / "bin" +
                              ":/usr/bin " + quote(envdoctor()) + " tree -r " + quote(json_ext_));
  EXPECT_EQ(shimmed.status, 0) << shimmed.err;
  EXPECT_NE(shimmed.out.find(" bound by /usr/bin/python3.11, as at import\n"), std::string::npos) << shimmed.out;
}

TEST_F(ExtensionLdd, WithoutAnInterpreterTheCApiIsSummarised) {
  CommandResult exact = run(quote(envdoctor()) + " ldd -r --exact " + quote(json_ext_));
  size_t unbound = count(exact.err, "undefined symbol: ");
  CommandResult r = run("env -u VIRTUAL_ENV -u CONDA_PREFIX -u ENVDOCTOR_PYTHON PATH=/nonexistent " +
                        quote(envdoctor()) + " ldd -r " + quote(json_ext_));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("\t" + std::to_string(unbound) +
                       " symbols left to the interpreter (no Python interpreter found; --python EXE binds them)\n"),
            std::string::npos)
      << r.out;
}

TEST_F(ExtensionLdd, AnInterpreterOfAnotherVersionIsNotUsed) {
  // A "python3.12" (a copy of 3.11 under another name, as the name is what says the version).
  TempDir tmp;
  fs::copy_file("/usr/bin/python3.11", tmp / "python3.12");
  CommandResult r = run(quote(envdoctor()) + " ldd -r --python " + quote(tmp / "python3.12") + " " + quote(json_ext_));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" symbols left to the interpreter (" + tmp / "python3.12" +
                       " is Python 3.12; the module is built for 3.11)\n"),
            std::string::npos)
      << r.out;
}

TEST_F(ExtensionLdd, AnExtensionThatLacksASymbolStillFails) {
  // A module with one reference nothing defines: the import fails, and so does ldd.
  if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
  std::string include = python_include();
  if (!fs::exists(include + "/Python.h")) GTEST_SKIP() << "needs Python.h";
  TempDir tmp;
  std::string ext = tmp / ("broken" + ext_suffix());
  build_shared(ext, extension_source("broken", "int nowhere_fn(void);", "nowhere_fn()"), "-I" + quote(include), tmp);
  CommandResult real = run("cd " + quote(tmp.path().string()) + " && /usr/bin/python3.11 -c 'import broken'");
  ASSERT_NE(real.err.find("undefined symbol: nowhere_fn"), std::string::npos) << real.err;
  CommandResult r = run(quote(envdoctor()) + " ldd -r --python /usr/bin/python3.11 " + quote(ext));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "undefined symbol: nowhere_fn\t(" + ext + ")\n");
}

// ---- severity: what an import runs is an error, other files a warning ----

class RecordSeverity : public VenvTest {};

TEST_F(RecordSeverity, MissingLicenseIsAWarningMissingModuleAnError) {
  std::string wheel = make_wheel(tmp_ / "wheels", {{"name", "notes"},
                                                   {"version", "1.0"},
                                                   {"files",
                                                    {{"notes/__init__.py", ""},
                                                     {"notes/mod.py", "X = 1\n"},
                                                     {"notes/LICENSE.txt", "MIT\n"},
                                                     {"notes/data/a.txt", "a\n"},
                                                     {"notes/data/b.txt", "b\n"},
                                                     {"notes/data/c.txt", "c\n"},
                                                     {"notes/data/d.txt", "d\n"},
                                                     {"notes/data/e.txt", "e\n"},
                                                     {"notes/data/f.txt", "f\n"}}}});
  Venv venv(tmp_, "venv");
  venv.install({wheel});
  fs::remove(venv.site() + "/notes/LICENSE.txt");
  EXPECT_EQ(venv.import("notes.mod"), "");  // the referee: nothing an import needs is gone
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  ASSERT_EQ(report["findings"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["findings"][0]["code"], "record-missing-file");
  EXPECT_EQ(report["findings"][0]["severity"], "warning");

  fs::remove(venv.site() + "/notes/mod.py");
  EXPECT_NE(venv.import("notes.mod"), "");  // now an import fails
  report = venv.check(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  for (const json& f : report["findings"])
    EXPECT_EQ(f["severity"], f["file"].get<std::string>().ends_with("mod.py") ? "error" : "warning") << f.dump();

  // --only-errors lists the error alone; --all lists every warning past the limit of 5.
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) fs::remove(venv.site() + "/notes/data/" + name + ".txt");
  CommandResult text = venv.envdoctor_run("check", "");
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("... and 3 more record-missing-file"), std::string::npos) << text.out;
  CommandResult only = venv.envdoctor_run("check", "--only-errors");
  EXPECT_EQ(only.status, 1);
  EXPECT_EQ(count(only.out, "  error   record-missing-file"), 1u) << only.out;
  EXPECT_EQ(count(only.out, "warning"), 1u) << only.out;  // the summary's "7 warnings" only
  EXPECT_NE(only.out.find("1 error, 7 warnings"), std::string::npos) << only.out;
  CommandResult all = venv.envdoctor_run("check", "--all");
  EXPECT_EQ(count(all.out, "  warning record-missing-file"), 7u) << all.out;
  EXPECT_EQ(all.out.find("... and"), std::string::npos) << all.out;
  EXPECT_EQ(venv.envdoctor_run("check", "--all --only-errors").status, 2);
}

// ---- paths as people read them ----

TEST(NormalisedPaths, FileLibraryAndHintAreLexicallyNormalTheLoadersMessageIsNot) {
  checks::Finding f;
  f.code = checks::Code::kMissingVersion;
  f.severity = checks::Severity::kError;
  f.file = "/v/site-packages/consumer/../provlib/lib/libprov.so.1";
  f.library = "/v/site-packages/consumer/./../provlib/lib/libprov.so.1";
  f.message = "/v/site-packages/consumer/../provlib/lib/libprov.so.1: version `PROV_2' not found";
  f.hint = "provlib ships /v/site-packages/consumer/../provlib/lib/libprov.so.1 (consumer looks in ../provlib/lib)";
  std::vector<checks::Finding> findings = {f};
  checks::sort_and_dedupe(findings);
  EXPECT_EQ(findings[0].file, "/v/site-packages/provlib/lib/libprov.so.1");
  EXPECT_EQ(findings[0].library, "/v/site-packages/provlib/lib/libprov.so.1");
  EXPECT_EQ(findings[0].message, f.message);
  EXPECT_EQ(findings[0].hint,
            "provlib ships /v/site-packages/provlib/lib/libprov.so.1 (consumer looks in ../provlib/lib)");
}

// ---- issue 26, item 8: files that are not libraries ----

// A CA bundle with a company's certificate appended (the classic cacert.pem edit) is not damage:
// by default only files that decide what loads are held to their RECORD, and a changed library
// still is. `--all-files` reports the bundle too, and its hint warns that the fix undoes the edit;
// the referee is pip itself: the pasted fix does restore the wheel's copy, dropping the CA.
TEST_F(VenvTest, AppendedCaBundleIsALocalEditNotDamage) {
  std::string lib = tmp_ / "build/libcert.so";
  build_shared(lib, "int cert_fn(void) { return 1; }", "-Wl,-soname,libcert.so", tmp_);
  const std::string bundle = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  std::string w = platlib_wheel("certpkg", "1.0", {{"certpkg/lib/libcert.so", lib}},
                                {{"certpkg/__init__.py", ""}, {"certpkg/cacert.pem", bundle}});
  Venv venv(tmp_, "v");
  venv.install({w});
  std::string site = venv.site();
  std::ofstream(site + "/certpkg/cacert.pem", std::ios::app) << "# Corp Root CA\n" << bundle;
  std::ofstream(site + "/certpkg/lib/libcert.so", std::ios::app) << "appended";
  EXPECT_EQ(venv.import("certpkg"), "");

  auto mismatched = [&](const json& report) {
    std::set<std::string> files;
    for (const json& f : report["findings"])
      if (f["code"] == "record-size-mismatch") files.insert(f["file"].get<std::string>().substr(site.size() + 1));
    return files;
  };
  int status = -1;
  json by_default = venv.check(&status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(mismatched(by_default), std::set<std::string>{"certpkg/lib/libcert.so"}) << by_default.dump(1);
  json all = venv.check(&status, "--all-files");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(mismatched(all), (std::set<std::string>{"certpkg/cacert.pem", "certpkg/lib/libcert.so"})) << all.dump(1);
  for (const json& f : all["findings"]) {
    if (f["code"] != "record-size-mismatch" || !f["file"].get<std::string>().ends_with("cacert.pem")) continue;
    EXPECT_NE(f["hint"].get<std::string>().find("undoing any local edit"), std::string::npos) << f.dump();
    ASSERT_TRUE(f.contains("fix_command")) << f.dump();
    CommandResult fixed =
        run("cd / && env -i PATH=/usr/bin:/bin bash -c " + quote(f["fix_command"].get<std::string>()));
    EXPECT_EQ(fixed.status, 0) << fixed.err;
    std::ifstream in(site + "/certpkg/cacert.pem");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), bundle);  // the CA is gone, as the hint warned
  }
}

// ---- issue 26, item 9: typing slips get the name that was meant ----

TEST(UserMistakes, MistypedCommandAndOptionSayWhatWasMeant) {
  CommandResult r = run(quote(envdoctor()) + " chek");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "envdoctor: 'chek' is not an envdoctor command; did you mean 'check'? (envdoctor --help lists them)\n");
  r = run(quote(envdoctor()) + " check --pyhton /usr/bin/python3");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: check: unknown option --pyhton; did you mean --python?\n");
  r = run(quote(envdoctor()) + " check --zzzzzz");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: check: unknown option --zzzzzz\n");
  r = run(quote(envdoctor()) + " frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: 'frobnicate' is not an envdoctor command (envdoctor --help lists them)\n");
}

TEST_F(VenvTest, MistypedPackageNameSaysWhatWasMeant) {
  auto [core1, core2, user] = dropped_symbol_wheels();
  Venv venv(tmp_, "v");
  venv.install({core1, user});
  CommandResult r = venv.envdoctor_run("why", "corepkj");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "envdoctor: corepkj: no package, library or file of that name in this environment; did you mean corepkg?\n");
  r = venv.envdoctor_run("check", "--without corpkg");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("corpkg is not installed in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; did you mean corepkg?"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace envdoctor::test
