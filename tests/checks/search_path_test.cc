// searches-current-directory against the referee: a real import. An extension module linked with
// RUNPATH `$ORIGIN:` (a trailing colon) imports a library from the directory Python is started in
// when its own copy is gone, and fails from any other directory: the loader searches the current
// working directory for it, as the warning says, and `check` predicts each import from where it
// runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class SearchPathTest : public VenvTest {};

TEST_F(SearchPathTest, EmptyRunpathElementSearchesTheCurrentDirectory) {
  std::string helper = tmp_ / "build/libhelper.so";
  build_shared(helper, "int helper(void) { return 1; }", "-Wl,-soname,libhelper.so", tmp_);
  std::string ext = tmp_ / ("build/cwdpkg/_cwdpkg" + suffix_);
  build_ext(ext, "_cwdpkg", "int helper(void);", "helper()",
            quote(helper) + " -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN:'");
  Venv venv(tmp_, "venv");
  venv.install({module_package("cwdpkg", {{"cwdpkg/_cwdpkg" + suffix_, ext}, {"cwdpkg/libhelper.so", helper}})});
  EXPECT_EQ(venv.import("cwdpkg"), "");

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  std::vector<json> found = findings(report, "searches-current-directory");
  ASSERT_EQ(found.size(), 1u) << report.dump(1);
  EXPECT_EQ(found[0]["severity"], "warning");
  EXPECT_EQ(found[0]["file"], venv.site() + "/cwdpkg/_cwdpkg" + suffix_);
  EXPECT_EQ(found[0]["package"], "cwdpkg");
  EXPECT_EQ(found[0]["message"],
            "RUNPATH `$ORIGIN:' has an empty element: the loader searches the current working directory (and its "
            "glibc-hwcaps subdirectories) for the libraries this file needs");
  EXPECT_EQ(report["findings"].size(), 1u) << report.dump(1);

  // The referee: without the package's copy, the import works only where the directory it is
  // started in has one.
  fs::remove(venv.site() + "/cwdpkg/libhelper.so");
  fs::create_directories(tmp_ / "work");
  fs::copy_file(helper, tmp_ / "work/libhelper.so");
  std::string from_work = "cd " + quote(tmp_ / "work") + " && ";
  CommandResult there = run(from_work + quote(venv.python()) + " -c 'import cwdpkg'");
  EXPECT_EQ(there.status, 0) << there.err;
  EXPECT_NE(venv.import("cwdpkg").find("libhelper.so: cannot open shared object file"), std::string::npos);
  // And check predicts both: the library missing from the test's directory, which has none, and
  // found from the one with the copy (the RECORD still lists the package's copy, gone from both).
  report = venv.check(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  EXPECT_EQ(findings(report, "missing-library").size(), 1u) << report.dump(1);
  CommandResult from_there = run(from_work + quote(envdoctor()) + " check --json --python " + quote(venv.python()));
  json there_report = json::parse(from_there.out);
  std::multiset<std::string> codes;
  for (const json& f : there_report["findings"]) codes.insert(f["code"].get<std::string>());
  EXPECT_EQ(codes, (std::multiset<std::string>{"record-missing-file", "searches-current-directory"})) << from_there.out;
}

}  // namespace
}  // namespace envdoctor::test
