// import-order-conflict against the referee: two packages that vendor different copies of one
// SONAME (built here with gcc and version scripts), installed with pip into a real venv, and
// `python -c "import old, new"` / `"import new, old"`. envdoctor must predict which order fails
// and with the loader's exact words; copies that serve each other must not be called a conflict.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/venv.h"

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
  std::string package(const std::string& name, const Copy& copy, const std::string& decl, const std::string& call) {
    std::string lib = tmp_ / ("build/" + name + "/" + name + "/lib/libv.so.1");
    std::string flags = "-Wl,-soname,libv.so.1";
    if (!copy.script.empty())
      flags += " -Wl,--version-script," + quote(tmp_.write("build/" + name + ".map", copy.script));
    build_shared(lib, copy.source, flags, tmp_);
    std::string ext = tmp_ / ("build/" + name + "/" + name + "/_" + name + suffix_);
    build_ext(ext, "_" + name, decl, call, quote(lib) + " -Wl,-rpath,'$ORIGIN/lib'");
    return make_wheel(tmp_ / "wheels",
                      {{"name", name},
                       {"version", "1.0"},
                       {"tag", "cp311-cp311-linux_x86_64"},
                       {"purelib", false},
                       {"files", {{name + "/__init__.py", "from . import _" + name + "\n"}}},
                       {"paths", {{name + "/lib/libv.so.1", lib}, {name + "/_" + name + suffix_, ext}}}});
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

}  // namespace
}  // namespace envdoctor::test
