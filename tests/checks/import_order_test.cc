// import-order-conflict against the referee: two packages that vendor different copies of one
// SONAME (built here with gcc and version scripts), installed with pip into a real venv, and
// `python -c "import old, new"` / `"import new, old"`. envdoctor must predict which order fails
// and with the loader's exact words; copies that serve each other must not be called a conflict.
// Then an older copy on LD_LIBRARY_PATH, searched before a module's DT_RUNPATH and after its
// DT_RPATH, against `LD_LIBRARY_PATH=DIR python -c "import new"`.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// One copy of libv.so.1: its C source and, when versioned, its version script.
struct Copy {
  std::string source;
  std::string script;  // "" for an unversioned library
};

class ImportOrderTest : public VenvTest {
 protected:
  // Package `name` vendors `copy` as name/lib/libv.so.1; its extension module `_name` (imported
  // by name/__init__.py) calls `call`, declared by `decl`, and finds the library by RPATH.
  // `dtags` picks DT_RUNPATH (--enable-new-dtags) or DT_RPATH (--disable-new-dtags).
  std::string package(const std::string& name, const Copy& copy, const std::string& decl, const std::string& call,
                      const std::string& dtags = "") {
    std::string lib = tmp_ / ("build/" + name + "/" + name + "/lib/libv.so.1");
    std::string flags = "-Wl,-soname,libv.so.1";
    if (!copy.script.empty())
      flags += " -Wl,--version-script," + quote(tmp_.write("build/" + name + ".map", copy.script));
    build_shared(lib, copy.source, flags, tmp_);
    std::string ext = tmp_ / ("build/" + name + "/" + name + "/_" + name + suffix_);
    build_ext(ext, "_" + name, decl, call, quote(lib) + " " + dtags + " -Wl,-rpath,'$ORIGIN/lib'");
    return module_package(name, {{name + "/lib/libv.so.1", lib}, {name + "/_" + name + suffix_, ext}});
  }

  // libv.so.1 built from `copy` into DIR (a system directory, off the environment).
  std::string system_copy(const std::string& dir, const Copy& copy) {
    std::string lib = tmp_ / (dir + "/libv.so.1");
    std::string flags = "-Wl,-soname,libv.so.1";
    if (!copy.script.empty())
      flags += " -Wl,--version-script," + quote(tmp_.write("build/" + dir + ".map", copy.script));
    build_shared(lib, copy.source, flags, tmp_);
    return tmp_ / dir;
  }

  const Copy kOldVersioned{"int v_one(void) { return 1; }", "V_1.0 { global: v_one; local: *; };"};
  const Copy kNewVersioned{"int v_one(void) { return 1; } int v_two(void) { return 2; }",
                           "V_1.0 { global: v_one; local: *; }; V_2.0 { global: v_two; } V_1.0;"};
};

// The case: old's libv.so.1 defines V_1.0, new's V_1.0 and V_2.0. Imported first, old's
// copy serves new too (matched by SONAME although old's module was loaded RTLD_LOCAL), and new's
// module needs V_2.0 of it.
TEST_F(ImportOrderTest, OldCopyLoadedFirstLacksTheVersionTheNewPackageNeeds) {
  std::string old_wheel = package("old", kOldVersioned, "int v_one(void);", "v_one()");
  std::string new_wheel = package("new", kNewVersioned, "int v_two(void);", "v_two()");
  Venv venv(tmp_, "versions");
  venv.install({old_wheel, new_wheel});
  std::string fails = venv.import("old, new");
  ASSERT_NE(fails.find("version `V_2.0' not found"), std::string::npos) << fails;
  EXPECT_EQ(venv.import("new, old"), "");
  EXPECT_EQ(venv.import("old"), "");
  EXPECT_EQ(venv.import("new"), "");

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);  // a warning: one order works
  auto conflicts = findings(report, "import-order-conflict");
  ASSERT_EQ(conflicts.size(), 1u) << report.dump(1);
  const json& f = conflicts[0];
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_EQ(f["message"], fails);
  EXPECT_EQ(f["package"], "new");
  EXPECT_EQ(f["library"], "libv.so.1");
  EXPECT_EQ(f["version"], "V_2.0");
  std::string hint = f["hint"];
  EXPECT_EQ(hint.find("`import old, new` fails: old 1.0 loads its libv.so.1 (" + venv.site() + "/old/lib/libv.so.1)"),
            0u)
      << hint;
  EXPECT_NE(hint.find("`import new, old` works: import new before old"), std::string::npos) << hint;
  EXPECT_NE(hint.find("upgrade old to a release whose libv.so.1 provides version V_2.0"), std::string::npos) << hint;
  // The conflict says it all: no duplicate-library beside it.
  EXPECT_TRUE(findings(report, "duplicate-library").empty()) << report.dump(1);
}

// The same with a symbol: unversioned copies, old's without v_two.
TEST_F(ImportOrderTest, OldCopyLoadedFirstLacksTheSymbolTheNewPackageNeeds) {
  std::string old_wheel = package("old", {"int v_one(void) { return 1; }", ""}, "int v_one(void);", "v_one()");
  std::string new_wheel = package("new", {"int v_one(void) { return 1; } int v_two(void) { return 2; }", ""},
                                  "int v_two(void);", "v_two()");
  Venv venv(tmp_, "symbols");
  venv.install({old_wheel, new_wheel});
  std::string fails = venv.import("old, new");
  ASSERT_NE(fails.find("undefined symbol: v_two"), std::string::npos) << fails;
  EXPECT_EQ(venv.import("new, old"), "");

  json report = venv.check();
  auto conflicts = findings(report, "import-order-conflict");
  ASSERT_EQ(conflicts.size(), 1u) << report.dump(1);
  EXPECT_EQ(conflicts[0]["message"], fails);
  EXPECT_EQ(conflicts[0]["symbol"], "v_two");
  EXPECT_EQ(conflicts[0]["severity"], "warning");
}

// Each package needs what only its own copy has: no order works, an error for each order.
TEST_F(ImportOrderTest, NoOrderWorksIsAnError) {
  std::string old_wheel = package("old", {"int v_one(void) { return 1; } int v_old(void) { return 3; }", ""},
                                  "int v_old(void);", "v_old()");
  std::string new_wheel = package("new", {"int v_one(void) { return 1; } int v_two(void) { return 2; }", ""},
                                  "int v_two(void);", "v_two()");
  Venv venv(tmp_, "neither");
  venv.install({old_wheel, new_wheel});
  std::string old_first = venv.import("old, new");
  std::string new_first = venv.import("new, old");
  ASSERT_NE(old_first.find("undefined symbol: v_two"), std::string::npos) << old_first;
  ASSERT_NE(new_first.find("undefined symbol: v_old"), std::string::npos) << new_first;

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1) << report.dump(1);
  std::map<std::string, std::string> by_package;
  for (const json& f : findings(report, "import-order-conflict")) {
    EXPECT_EQ(f["severity"], "error");
    EXPECT_NE(f["hint"].get<std::string>().find("no import order works"), std::string::npos) << f["hint"];
    by_package[f["package"]] = f["message"];
  }
  EXPECT_EQ(by_package, (std::map<std::string, std::string>{{"new", old_first}, {"old", new_first}})) << report.dump(1);
  // `why PKG` is `check` about PKG: the same error and exit status for each (it once ran the load
  // checks alone, and said nothing of import orders).
  for (const std::string pkg : {"old", "new"}) {
    CommandResult why = venv.envdoctor_run("why", pkg);
    EXPECT_EQ(why.status, 1) << pkg << "\n" << why.out << why.err;
    EXPECT_NE(why.out.find("import-order-conflict"), std::string::npos) << why.out;
  }
}

// Two builds of one library, each enough for both packages: a duplicate, no conflict, and the
// duplicate's hint is advice.
TEST_F(ImportOrderTest, CopiesThatServeEachOtherAreNoConflict) {
  std::string old_wheel = package("old", kNewVersioned, "int v_one(void);", "v_one()");
  std::string new_wheel = package("new", kNewVersioned, "int v_two(void);", "v_two()");
  Venv venv(tmp_, "compatible");
  venv.install({old_wheel, new_wheel});
  EXPECT_EQ(venv.import("old, new"), "");
  EXPECT_EQ(venv.import("new, old"), "");

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(findings(report, "import-order-conflict").empty()) << report.dump(1);
  auto duplicates = findings(report, "duplicate-library");
  ASSERT_EQ(duplicates.size(), 1u) << report.dump(1);
  std::string hint = duplicates[0]["hint"];
  EXPECT_NE(hint.find("both import orders were tried and each copy serves the other's users, so nothing fails now"),
            std::string::npos)
      << hint;
  EXPECT_NE(hint.find("keep these packages on one release of libv.so.1"), std::string::npos) << hint;
}

// The same reasoning with a copy on LD_LIBRARY_PATH: the loader searches LD_LIBRARY_PATH before
// an object's DT_RUNPATH (glibc elf/dl-load.c: _dl_map_object), so an older system copy there
// serves new's module, which needs V_2.0 of it. The referee is the import with and without
// LD_LIBRARY_PATH; check must say the same for both, name the directory, and fix by taking it off.
TEST_F(ImportOrderTest, OlderCopyOnLdLibraryPathShadowsTheWheelsForRunpath) {
  std::string dir = system_copy("sys", kOldVersioned);
  std::string new_wheel = package("new", kNewVersioned, "int v_two(void);", "v_two()", "-Wl,--enable-new-dtags");
  Venv venv(tmp_, "shadowed");
  venv.install({new_wheel});
  std::string fails = venv.import("new", "LD_LIBRARY_PATH=" + dir);
  ASSERT_EQ(fails,
            dir + "/libv.so.1: version `V_2.0' not found (required by " + venv.site() + "/new/_new" + suffix_ + ")");
  ASSERT_EQ(venv.import("new"), "");

  int status = -1;
  json report = venv.check(&status, "", "LD_LIBRARY_PATH=" + dir);
  EXPECT_EQ(status, 1) << report.dump(1);
  auto missing = findings(report, "missing-version");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  const json& f = missing[0];
  EXPECT_EQ(f["message"], fails);
  EXPECT_EQ(f["package"], "new");
  EXPECT_EQ(f["version"], "V_2.0");
  EXPECT_EQ(f["hint"], "LD_LIBRARY_PATH puts " + dir + " first: the loader searches LD_LIBRARY_PATH before _new" +
                           suffix_ + "'s RUNPATH, so libv.so.1 is " + dir +
                           "/libv.so.1 (no package), which lacks version V_2.0; without LD_LIBRARY_PATH _new" +
                           suffix_ + " loads " + venv.site() +
                           "/new/lib/libv.so.1 (new 1.0, found by RUNPATH), which has it; take " + dir +
                           " off LD_LIBRARY_PATH (unset it), or align the copies: replace " + dir +
                           "/libv.so.1 with a release of libv.so.1 that provides version V_2.0");
  EXPECT_EQ(f["fix_command"], "unset LD_LIBRARY_PATH");
  // The fix, applied, is what the referee says works; --ld-library-path models another value.
  EXPECT_EQ(venv.import("new", "LD_LIBRARY_PATH=/nonexistent"), "");
  report = venv.check(&status, "--ld-library-path " + quote(dir + ":/nonexistent"));
  missing = findings(report, "missing-version");
  ASSERT_EQ(missing.size(), 1u) << report.dump(1);
  EXPECT_EQ(missing[0]["fix_command"], "export LD_LIBRARY_PATH=/nonexistent");
  // Without LD_LIBRARY_PATH, nothing.
  report = venv.check(&status, "", "-u LD_LIBRARY_PATH");
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
}

// DT_RPATH comes before LD_LIBRARY_PATH: the same module linked with RPATH keeps its own copy.
TEST_F(ImportOrderTest, LdLibraryPathDoesNotShadowRpath) {
  std::string dir = system_copy("sys", kOldVersioned);
  std::string new_wheel = package("new", kNewVersioned, "int v_two(void);", "v_two()", "-Wl,--disable-new-dtags");
  Venv venv(tmp_, "rpath");
  venv.install({new_wheel});
  ASSERT_EQ(venv.import("new", "LD_LIBRARY_PATH=" + dir), "");
  int status = -1;
  json report = venv.check(&status, "", "LD_LIBRARY_PATH=" + dir);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
}

// The shape of `libnvJitLink.so.12: undefined symbol: __nvJitLinkAddData_12_1, version
// libnvJitLink.so.12`: the old copy has the version node but not the symbol in it.
TEST_F(ImportOrderTest, OlderCopyOnLdLibraryPathLacksASymbolOfAVersionItHas) {
  std::string dir = system_copy("sys", {"int v_one(void) { return 1; }", "V_1.0 { global: v_one; local: *; };"});
  std::string new_wheel = package(
      "new",
      {"int v_one(void) { return 1; } int v_two(void) { return 2; }", "V_1.0 { global: v_one; v_two; local: *; };"},
      "int v_two(void);", "v_two()", "-Wl,--enable-new-dtags");
  Venv venv(tmp_, "symbol");
  venv.install({new_wheel});
  std::string fails = venv.import("new", "LD_LIBRARY_PATH=" + dir);
  ASSERT_EQ(fails, venv.site() + "/new/_new" + suffix_ + ": undefined symbol: v_two, version V_1.0");
  ASSERT_EQ(venv.import("new"), "");

  int status = -1;
  json report = venv.check(&status, "", "LD_LIBRARY_PATH=" + dir);
  EXPECT_EQ(status, 1) << report.dump(1);
  auto undefined = findings(report, "undefined-symbol");
  ASSERT_EQ(undefined.size(), 1u) << report.dump(1);
  EXPECT_EQ(undefined[0]["message"], fails);
  EXPECT_EQ(undefined[0]["package"], "new");
  std::string hint = undefined[0]["hint"];
  EXPECT_EQ(hint.find("LD_LIBRARY_PATH puts " + dir + " first"), 0u) << hint;
  EXPECT_NE(hint.find("which lacks symbol v_two of version V_1.0; without LD_LIBRARY_PATH"), std::string::npos) << hint;
  EXPECT_EQ(undefined[0]["fix_command"], "unset LD_LIBRARY_PATH");
  report = venv.check(&status, "", "-u LD_LIBRARY_PATH");
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
}

// Through the pairing: old's module (RUNPATH) gets the LD_LIBRARY_PATH copy, new's (RPATH, before
// LD_LIBRARY_PATH) its own. Imported first, the LD_LIBRARY_PATH copy serves new by SONAME.
TEST_F(ImportOrderTest, LdLibraryPathCopyLoadedFirstByAnotherPackage) {
  std::string dir = system_copy("sys", kOldVersioned);
  std::string old_wheel = package("old", kOldVersioned, "int v_one(void);", "v_one()", "-Wl,--enable-new-dtags");
  std::string new_wheel = package("new", kNewVersioned, "int v_two(void);", "v_two()", "-Wl,--disable-new-dtags");
  Venv venv(tmp_, "paired");
  venv.install({old_wheel, new_wheel});
  std::string variables = "LD_LIBRARY_PATH=" + dir;
  std::string fails = venv.import("old, new", variables);
  ASSERT_EQ(fails,
            dir + "/libv.so.1: version `V_2.0' not found (required by " + venv.site() + "/new/_new" + suffix_ + ")");
  EXPECT_EQ(venv.import("new, old", variables), "");

  int status = -1;
  json report = venv.check(&status, "", variables);
  EXPECT_EQ(status, 0) << report.dump(1);
  auto conflicts = findings(report, "import-order-conflict");
  ASSERT_EQ(conflicts.size(), 1u) << report.dump(1);
  EXPECT_EQ(conflicts[0]["message"], fails);
  EXPECT_EQ(conflicts[0]["package"], "new");
  std::string hint = conflicts[0]["hint"];
  EXPECT_EQ(hint.find("`import old, new` fails: old 1.0 loads its libv.so.1 (" + dir + "/libv.so.1) first"), 0u)
      << hint;
  EXPECT_NE(hint.find("`import new, old` works"), std::string::npos) << hint;
  // Without LD_LIBRARY_PATH old loads its own old copy, and that one wins instead.
  fails = venv.import("old, new");
  ASSERT_EQ(fails.find(venv.site() + "/old/lib/libv.so.1: version `V_2.0' not found"), 0u) << fails;
  report = venv.check(&status, "", "-u LD_LIBRARY_PATH");
  conflicts = findings(report, "import-order-conflict");
  ASSERT_EQ(conflicts.size(), 1u) << report.dump(1);
  EXPECT_EQ(conflicts[0]["message"], fails);
}

}  // namespace
}  // namespace envdoctor::test
