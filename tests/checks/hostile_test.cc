// `check` on broken environments: a missing or broken interpreter is exit status 2 with a clear
// message; broken package records and damaged libraries are findings, and the rest of the
// environment is still checked.
#include <gtest/gtest.h>

#include <fstream>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

TEST(CheckHostile, MissingInterpreterIsExitTwo) {
  CommandResult r = run(quote(envdoctor()) + " check --python /nonexistent/bin/python");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err.rfind("envdoctor: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/bin/python"), std::string::npos) << r.err;
}

TEST(CheckHostile, InterpreterThatFailsIsExitTwo) {
  TempDir tmp;
  std::string fake = tmp.write("bin/python", "#!/bin/sh\necho 'not json'\nexit 3\n");
  fs::permissions(fake, fs::perms::owner_all);
  CommandResult r = run(quote(envdoctor()) + " check --python " + quote(fake));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("envdoctor: ", 0), 0u) << r.err;
}

TEST(CheckHostile, BadArgumentsAreExitTwo) {
  EXPECT_EQ(run(quote(envdoctor()) + " check --no-such-flag").status, 2);
  EXPECT_EQ(run(quote(envdoctor()) + " check --no-exec").status, 2);
  EXPECT_EQ(run(quote(envdoctor()) + " frobnicate").status, 2);
}

// A RECORD with hostile rows, a truncated library and a METADATA without a name: each is
// reported, and the healthy package next to them is still checked.
TEST(CheckHostile, BrokenRecordsAndLibrariesAreFindings) {
  if (!have_tool("gcc") || !have_tool("python3") || !python3_facts().pip) GTEST_SKIP() << "needs gcc, python3 and pip";
  TempDir tmp;
  fs::create_directories(tmp / "wheels");
  std::string lib = tmp / "build/libgood.so";
  build_shared(lib, "int good(void) { return 1; }", "-Wl,-soname,libgood.so", tmp);
  std::string good = make_wheel(tmp / "wheels", {{"name", "goodpkg"},
                                                 {"version", "1.0"},
                                                 {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                 {"purelib", false},
                                                 {"paths", {{"goodpkg/libgood.so", lib}}}});
  std::string bad = make_wheel(tmp / "wheels", {{"name", "badpkg"},
                                                {"version", "1.0"},
                                                {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                {"purelib", false},
                                                {"paths", {{"badpkg/libbad.so", lib}}}});
  Venv venv(tmp, "v");
  venv.install({good, bad});
  std::string site = venv.site();
  // Damage badpkg: truncate its library, and append hostile rows to its RECORD.
  fs::resize_file(site + "/badpkg/libbad.so", 40);
  std::ofstream(site + "/badpkg-1.0.dist-info/RECORD", std::ios::app)
      << "\"unterminated,sha256=x,1\n../../../../../../etc/passwd,,\n/abs/path,sha256=!!,notanumber\n"
      << std::string(70000, 'x') << ",,\n";

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  bool invalid = false, size = false;
  for (const json& f : report["findings"]) {
    if (f["code"] == "invalid-elf" && f["file"] == site + "/badpkg/libbad.so") {
      invalid = true;
      EXPECT_EQ(f["message"], site + "/badpkg/libbad.so: file too short");
    }
    if (f["code"] == "record-size-mismatch" && f["package"] == "badpkg") size = true;
    EXPECT_NE(f["package"], "goodpkg") << f.dump();
  }
  EXPECT_TRUE(invalid) << report.dump(1);
  EXPECT_TRUE(size) << report.dump(1);
  // The referee: the loader's own words for the truncated file.
  CommandResult ld = run("LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 " + quote(site + "/badpkg/libbad.so"));
  EXPECT_NE(ld.err.find("file too short"), std::string::npos) << ld.err;
}

// An extension module that is not ELF at all (overwritten, or a failed download): Python dlopens
// it on import and fails; the check says so in the same words.
TEST(CheckHostile, ExtensionModuleThatIsNotElf) {
  if (!have_tool("python3") || !python3_facts().pip) GTEST_SKIP() << "needs python3 and pip";
  TempDir tmp;
  fs::create_directories(tmp / "wheels");
  std::string suffix = ext_suffix();
  std::string junk(200, 'x');
  std::string wheel =
      make_wheel(tmp / "wheels", {{"name", "junkmod"},
                                  {"version", "1.0"},
                                  {"tag", "cp311-cp311-linux_x86_64"},
                                  {"purelib", false},
                                  {"files", {{"junkmod/__init__.py", ""}, {"junkmod/_m" + suffix, junk}}}});
  Venv venv(tmp, "v");
  venv.install({wheel});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  std::string message;
  json invalid;
  for (const json& f : report["findings"])
    if (f["code"] == "invalid-elf") invalid = f, message = f["message"];
  EXPECT_EQ(message, venv.site() + "/junkmod/_m" + suffix + ": invalid ELF header") << report.dump(1);
  EXPECT_EQ(venv.import("junkmod._m"), message);
  // The wheel shipped it so (the file is as its RECORD says): a reinstall would bring the same
  // bytes back, so no reinstall is offered (issue 26, 7: a fix that does not fix).
  EXPECT_FALSE(invalid.contains("fix_command")) << invalid.dump(1);
  EXPECT_NE(invalid["hint"].get<std::string>().find("the build itself is broken"), std::string::npos)
      << invalid.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
