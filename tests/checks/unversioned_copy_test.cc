// An unversioned copy over a versioned one (issue 49, item 3). Two wheels write the same path,
// vshared/libv.so.1: vlib-versioned's build has symbol versioning (version node V1), vlib-plain's
// has none, and vlib-plain is installed last, so its copy wins. The extension was linked against
// the versioned build. ld.so warns "no version information available" (with LD_WARN, as glibc's
// ldd runs it) and, binding the first symbol with a version there, dies of an assertion in
// check_match (dl-lookup.c), exit 127, the interpreter with it. The referees: the real import (its
// exit status and stderr) and glibc's `ldd` and `ldd -r` on the extension, line for line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::string kAssertion =
    "Inconsistency detected by ld.so: dl-lookup.c: 107: check_match: Assertion `version->filename == NULL || ! "
    "_dl_name_match_p (version->filename, map)' failed!";

// Drops the " (0x...)" addresses and the vdso line of glibc's ldd.
std::string without_addresses(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("linux-vdso.so.1") != std::string::npos) continue;
    size_t paren = line.rfind(" (0x");
    if (paren != std::string::npos && line.back() == ')') line.resize(paren);
    out += line + "\n";
  }
  return out;
}

class UnversionedCopy : public VenvTest {};

TEST_F(UnversionedCopy, WinsOverTheVersionedBuildItsUsersNeed) {
  if (!have_tool("ldd")) GTEST_SKIP() << "needs glibc's ldd";
  fs::create_directories(tmp_ / "build/versioned");
  fs::create_directories(tmp_ / "build/plain");
  std::string map = tmp_ / "build/v.map";
  std::ofstream(map) << "V1 { global: vfoo; vbar; local: *; };\n";
  const std::string source = "int vfoo(void) { return 1; } int vbar(void) { return 2; }";
  std::string versioned = tmp_ / "build/versioned/libv.so.1", plain = tmp_ / "build/plain/libv.so.1";
  build_shared(versioned, source, "-Wl,-soname,libv.so.1 -Wl,--version-script=" + quote(map), tmp_);
  build_shared(plain, source, "-Wl,-soname,libv.so.1", tmp_);
  std::string ext = tmp_ / ("build/vuser/_v" + suffix_);
  build_ext(ext, "_v", "int vfoo(void); int vbar(void);", "vfoo() + vbar()",
            quote(versioned) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../vshared'");
  auto venv = venv_with_pip();
  venv->install(
      {platlib_wheel("vlib-versioned", "1.0", {{"vshared/libv.so.1", versioned}}),
       platlib_wheel("vuser", "1.0", {{"vuser/_v" + suffix_, ext}}, {{"vuser/__init__.py", ""}}, {"vlib-versioned"})});
  venv->install({platlib_wheel("vlib-plain", "1.0", {{"vshared/libv.so.1", plain}})});
  const std::string lib = venv->site() + "/vshared/libv.so.1";
  const std::string loaded = venv->site() + "/vuser/../vshared/libv.so.1";  // l_name, as RUNPATH spells it
  const std::string module = venv->site() + "/vuser/_v" + suffix_;

  CommandResult real = run("cd / && " + quote(venv->python()) + " -c 'import vuser._v'");
  EXPECT_EQ(real.status, 127) << real.err;
  EXPECT_NE(real.err.find(kAssertion), std::string::npos) << real.err;

  // The report as is: the paste check of every fix_command (fixtures/venv.h) belongs to
  // file-owned-twice's advice, not to this case.
  CommandResult check = venv->envdoctor_run("check", "--json");
  EXPECT_EQ(check.status, 1) << check.err;
  expect_schema_valid("check", check.out);
  json report = json::parse(check.out);
  json abort;
  for (const json& f : report["findings"])
    if (f["message"] == kAssertion) abort = f;
  ASSERT_FALSE(abort.is_null()) << report.dump(1);
  EXPECT_EQ(abort["code"], "missing-version");
  EXPECT_EQ(abort["file"], module);
  EXPECT_EQ(abort["version"], "V1");
  EXPECT_EQ(abort["caused_by"],
            json({{"code", "file-owned-twice"}, {"file", lib}, {"package", abort["caused_by"]["package"]}}))
      << abort.dump(1);
  std::string hint = abort["hint"];
  EXPECT_EQ(hint.rfind("two packages write " + lib + ", and the copy that won has no symbol versioning; ", 0), 0u)
      << hint;

  for (const std::string mode : {"", "-r "}) {
    SCOPED_TRACE("ldd " + mode);
    CommandResult want = run("ldd " + mode + quote(module) + " 2>&1");
    CommandResult got = run(quote(envdoctor()) + " ldd " + mode + quote(module) + " 2>&1");
    std::string warning = module + ": " + loaded + ": no version information available (required by " + module + ")\n";
    EXPECT_EQ(without_addresses(want.out).rfind(warning, 0), 0u) << want.out;
    EXPECT_EQ(got.out.rfind(warning, 0), 0u) << got.out;
    EXPECT_EQ(got.out.find(kAssertion) != std::string::npos, !mode.empty()) << got.out;
    EXPECT_EQ(want.out.find(kAssertion) != std::string::npos, !mode.empty()) << want.out;
  }
}

}  // namespace
}  // namespace envdoctor::test
