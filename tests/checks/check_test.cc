// `envdoctor check` against the referees: real venvs, real wheels built here (gcc-built
// libraries and CPython extension modules), real `pip install` / `pip uninstall`, and a real
// `python -c "import M"` for every prediction: success, or failure with the same loader words.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class CheckTest : public VenvTest {};

TEST_F(CheckTest, CleanEnvironmentHasNoErrorsAndImports) {
  std::string lib = tmp_ / "build/clean/cleanpkg/lib/libclean.so";
  build_shared(lib, "int clean_fn(void) { return 7; }", "-Wl,-soname,libclean.so", tmp_);
  std::string ext = tmp_ / ("build/clean/cleanpkg/_core" + suffix_);
  build_ext(ext, "_core", "int clean_fn(void);", "clean_fn()",
            "-L" + quote(tmp_ / "build/clean/cleanpkg/lib") + " -lclean -Wl,-rpath,'$ORIGIN/lib'");
  std::string wheel =
      make_wheel(tmp_ / "wheels", {{"name", "cleanpkg"},
                                   {"version", "1.0"},
                                   {"tag", "cp311-cp311-linux_x86_64"},
                                   {"purelib", false},
                                   {"files", {{"cleanpkg/__init__.py", ""}}},
                                   {"paths", {{"cleanpkg/lib/libclean.so", lib}, {"cleanpkg/_core" + suffix_, ext}}}});
  Venv venv(tmp_, "clean");
  venv.install({wheel});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_EQ(report["summary"]["errors"], 0) << report.dump(1);
  EXPECT_GE(report["environment"]["elf_files"].get<int>(), 2);
  EXPECT_EQ(venv.import("cleanpkg._core"), "");
  // Nothing printed, nothing to explain: the text ends with its verdict.
  CommandResult text = venv.envdoctor_run("check", "");
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(text.out.ends_with("\n\nAll clear: every library here will load.\n")) << text.out;
}

TEST_F(CheckTest, ExtensionNeedingALibraryNobodyProvides) {
  std::string lib = tmp_ / "build/ghost/libghost.so";
  build_shared(lib, "int ghost_fn(void) { return 1; }", "-Wl,-soname,libghost.so.3", tmp_);
  std::string ext = tmp_ / ("build/lonely/lonely/_ext" + suffix_);
  build_ext(ext, "_ext", "int ghost_fn(void);", "ghost_fn()", quote(lib));
  std::string wheel = make_wheel(tmp_ / "wheels", {{"name", "lonely"},
                                                   {"version", "2.0"},
                                                   {"tag", "cp311-cp311-linux_x86_64"},
                                                   {"purelib", false},
                                                   {"files", {{"lonely/__init__.py", ""}}},
                                                   {"paths", {{"lonely/_ext" + suffix_, ext}}}});
  Venv venv(tmp_, "lonely");
  venv.install({wheel});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto missing = findings(report, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["library"], "libghost.so.3");
  EXPECT_EQ(missing[0]["package"], "lonely");
  EXPECT_EQ(missing[0]["file"], venv.site() + "/lonely/_ext" + suffix_);
  // The referee: the import fails with exactly the predicted words.
  EXPECT_EQ(venv.import("lonely._ext"), missing[0]["message"].get<std::string>());
}

// Two wheels install one library file (as nvidia-cudnn-cu12 and -cu13 do); a torch-like
// package needs it. Before: a warning and a working import. After a real `pip uninstall` of one
// owner: the other owner's file is gone, and the import fails as predicted.
TEST_F(CheckTest, TwoOwnersOfOneLibraryThenUninstallOne) {
  Venv venv(tmp_, "owners");
  venv.install(two_owners_wheels());

  int status = -1;
  json before = venv.check(&status);
  EXPECT_EQ(status, 0) << before.dump(1);
  auto twice = findings(before, "file-owned-twice");
  ASSERT_EQ(twice.size(), 1u) << before.dump(1);
  EXPECT_EQ(twice[0]["packages"], json({"fake-cudnn-cu12", "fake-cudnn-cu13"}));
  EXPECT_EQ(venv.import("faketorch._C"), "");

  venv.uninstall("fake-cudnn-cu12");
  json after = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto gone = findings(after, "record-missing-file");
  ASSERT_EQ(gone.size(), 1u) << after.dump(1);
  EXPECT_EQ(gone[0]["package"], "fake-cudnn-cu13");
  auto missing = findings(after, "missing-library");
  ASSERT_EQ(missing.size(), 1u) << after.dump(1);
  EXPECT_EQ(missing[0]["package"], "faketorch");
  // The missing file is the cause: the loader looked for the library where fake-cudnn-cu13's RECORD
  // puts it, and the fix is the record finding's.
  EXPECT_EQ(missing[0]["caused_by"]["code"], "record-missing-file");
  EXPECT_NE(missing[0]["hint"].get<std::string>().find("fake-cudnn-cu13 lists fakenv/cudnn/lib/libfakecudnn.so.9"),
            std::string::npos)
      << missing[0]["hint"];
  EXPECT_EQ(missing[0]["fix_command"], gone[0]["fix_command"]);
  EXPECT_EQ(venv.import("faketorch._C"), missing[0]["message"].get<std::string>());
  // The text ends by naming `envdoctor explain` for the codes it printed, in their order.
  CommandResult text = venv.envdoctor_run("check", "");
  EXPECT_EQ(text.status, 1) << text.err;
  std::string tail =
      "\n2 errors, 0 warnings (1 cause, 1 consequence)\nwhat these mean: envdoctor explain record-missing-file "
      "missing-library\n";
  ASSERT_GE(text.out.size(), tail.size()) << text.out;
  EXPECT_EQ(text.out.substr(text.out.size() - tail.size()), tail) << text.out;
}

TEST_F(CheckTest, PlaceholderWheelInstallsNothing) {
  std::string wheel = make_wheel(tmp_ / "wheels", {{"name", "nvidia-npp-cu13"}, {"version", "0.0.0a0"}});
  Venv venv(tmp_, "placeholder");
  venv.install({wheel});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0);
  auto meta = findings(report, "metadata-only-package");
  ASSERT_EQ(meta.size(), 1u) << report.dump(1);
  EXPECT_EQ(meta[0]["package"], "nvidia-npp-cu13");
  EXPECT_EQ(meta[0]["severity"], "warning");
}

// extpkg's extension needs libbase.so, with no RPATH: it resolves only because basepkg (which
// extpkg requires) loaded it first. It was built against a newer libbase than basepkg ships,
// so the symbol is missing: found only through the import context, and never reported as a
// missing library.
TEST_F(CheckTest, UndefinedSymbolThroughTheImportContext) {
  std::string v1 = tmp_ / "build/v1/libbase.so";
  std::string v2 = tmp_ / "build/v2/libbase.so";
  build_shared(v1, "int base_fn_v1(void) { return 1; }", "-Wl,-soname,libbase.so", tmp_);
  build_shared(v2, "int base_fn_v1(void) { return 1; } int base_fn_v2(void) { return 2; }", "-Wl,-soname,libbase.so",
               tmp_);
  std::string base_ext = tmp_ / ("build/basepkg/_core" + suffix_);
  build_ext(base_ext, "_core", "int base_fn_v1(void);", "base_fn_v1()", quote(v1) + " -Wl,-rpath,'$ORIGIN/lib'");
  std::string ext = tmp_ / ("build/extpkg/_ext" + suffix_);
  build_ext(ext, "_ext", "int base_fn_v2(void);", "base_fn_v2()", quote(v2));
  std::string base =
      make_wheel(tmp_ / "wheels", {{"name", "basepkg"},
                                   {"version", "1.0"},
                                   {"tag", "cp311-cp311-linux_x86_64"},
                                   {"purelib", false},
                                   {"files", {{"basepkg/__init__.py", "from . import _core\n"}}},
                                   {"paths", {{"basepkg/lib/libbase.so", v1}, {"basepkg/_core" + suffix_, base_ext}}}});
  std::string extw = make_wheel(tmp_ / "wheels", {{"name", "extpkg"},
                                                  {"version", "0.5"},
                                                  {"tag", "cp311-cp311-linux_x86_64"},
                                                  {"purelib", false},
                                                  {"requires", {"basepkg>=1"}},
                                                  {"files", {{"extpkg/__init__.py", "import basepkg\n"}}},
                                                  {"paths", {{"extpkg/_ext" + suffix_, ext}}}});
  Venv venv(tmp_, "context");
  venv.install({base, extw});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  EXPECT_TRUE(findings(report, "missing-library").empty()) << report.dump(1);
  auto undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_EQ(undefined[0]["symbol"], "base_fn_v2");
  EXPECT_EQ(undefined[0]["package"], "extpkg");
  EXPECT_NE(undefined[0]["hint"].get<std::string>().find("basepkg 1.0"), std::string::npos) << undefined[0]["hint"];
  EXPECT_EQ(venv.import("extpkg._ext"), undefined[0]["message"].get<std::string>());
  EXPECT_EQ(venv.import("basepkg._core"), "");
}

// sib/_ext needs libcore.so with no RPATH: it loads because sib/__init__.py imports sib._core
// (whose RUNPATH finds libcore.so) first. The package's own import order is part of the context.
TEST_F(CheckTest, SiblingModuleImportedFirstByInit) {
  std::string core = tmp_ / "build/sib/sib/lib/libcore.so";
  build_shared(core, "int core_fn(void) { return 3; }", "-Wl,-soname,libcore.so", tmp_);
  std::string first = tmp_ / ("build/sib/sib/_core" + suffix_);
  build_ext(first, "_core", "int core_fn(void);", "core_fn()", quote(core) + " -Wl,-rpath,'$ORIGIN/lib'");
  std::string second = tmp_ / ("build/sib/sib/_ext" + suffix_);
  build_ext(second, "_ext", "int core_fn(void);", "core_fn()", quote(core));
  std::string wheel = make_wheel(
      tmp_ / "wheels",
      {{"name", "sib"},
       {"version", "1.0"},
       {"tag", "cp311-cp311-linux_x86_64"},
       {"purelib", false},
       {"files", {{"sib/__init__.py", "from . import _core  # first\nfrom . import _ext\n"}}},
       {"paths", {{"sib/lib/libcore.so", core}, {"sib/_core" + suffix_, first}, {"sib/_ext" + suffix_, second}}}});
  Venv venv(tmp_, "sib");
  venv.install({wheel});
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(findings(report, "missing-library").empty()) << report.dump(1);
  EXPECT_EQ(venv.import("sib._ext"), "");
}

}  // namespace
}  // namespace envdoctor::test
