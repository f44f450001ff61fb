// One cause per failed load (issue 49, item 1). ld.so stops a load at the first error it meets
// (a library it does not find, a version it does not find) and binds no symbol after it, so the
// undefined symbols of that load, and a second version missing from the same library, follow
// from the first error: they name it (`caused_by`), take its fix, and the summary does not count
// them. The referee is the real import: it reports the first error only.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class FirstErrorCauses : public VenvTest {
 protected:
  // Every finding of `report` but `cause` is a consequence of it, with its fix.
  static void expect_one_cause(const json& report, const json& cause, size_t consequences) {
    size_t linked = 0;
    json expected = {{"code", cause["code"]}, {"file", cause["file"]}};
    if (cause.contains("library")) expected["library"] = cause["library"];
    expected["package"] = cause.value("package", json(nullptr));
    for (const json& f : report["findings"]) {
      if (f == cause) continue;
      EXPECT_EQ(f["caused_by"], expected) << f.dump(1);
      EXPECT_EQ(f.value("fix_command", ""), cause.value("fix_command", "")) << f.dump(1);
      ++linked;
    }
    EXPECT_EQ(linked, consequences) << report.dump(1);
    EXPECT_FALSE(cause.contains("caused_by")) << cause.dump(1);
    EXPECT_EQ(report["summary"]["causes"], 1) << report["summary"].dump();
  }
};

// The second seed's shape: an extension built against libshim.so.12 (version node libshim.so.12,
// as nvcc's against libcudart.so.12), and a symlink libshim.so.12 -> libshim.so.13, whose node is
// libshim.so.13. dlopen fails at the version; the three symbols are never looked up.
TEST_F(FirstErrorCauses, SymlinkShimIsOneMissingVersion) {
  auto node = [&](const std::string& name) {
    std::string map = tmp_ / ("build/" + name + ".map");
    fs::create_directories(tmp_ / "build");
    std::ofstream(map) << name << " { global: s1; s2; s3; local: *; };\n";
    std::string lib = tmp_ / ("build/" + name.substr(name.size() - 2) + "/" + name);
    build_shared(lib, "int s1(void) { return 1; } int s2(void) { return 2; } int s3(void) { return 3; }",
                 "-Wl,-soname," + name + " -Wl,--version-script=" + quote(map), tmp_);
    return lib;
  };
  std::string v12 = node("libshim.so.12"), v13 = node("libshim.so.13");
  std::string ext = tmp_ / ("build/shimuser/_s" + suffix_);
  build_ext(ext, "_s", "int s1(void); int s2(void); int s3(void);", "s1() + s2() + s3()",
            quote(v12) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../shimrt/lib'");
  auto venv = venv_with_pip();
  venv->install(
      {platlib_wheel("shimrt", "13.0", {{"shimrt/lib/libshim.so.13", v13}}),
       platlib_wheel("shimuser", "1.0", {{"shimuser/_s" + suffix_, ext}}, {{"shimuser/__init__.py", ""}}, {"shimrt"})});
  fs::create_symlink("libshim.so.13", venv->site() + "/shimrt/lib/libshim.so.12");
  std::string real = venv->import("shimuser._s");
  ASSERT_NE(real.find("version `libshim.so.12' not found"), std::string::npos) << real;

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  auto version = findings(report, "missing-version");
  ASSERT_EQ(version.size(), 1u) << report.dump(1);
  EXPECT_EQ(version[0]["message"], real);
  EXPECT_EQ(findings(report, "undefined-symbol").size(), 3u) << report.dump(1);
  expect_one_cause(report, version[0], 3);
  for (const json& f : findings(report, "undefined-symbol")) {
    std::string hint = f["hint"];
    EXPECT_EQ(hint.rfind("ld.so stops at the first version it does not find (version libshim.so.12 of libshim.so.12, "
                         "required by _s" +
                             suffix_ + ") before it binds s",
                         0),
              0u)
        << hint;
  }
  CommandResult text = venv->envdoctor_run("check", "");
  EXPECT_NE(text.out.find("4 errors, 0 warnings (1 cause, 3 consequences)"), std::string::npos) << text.out;
}

// One need of GLIBC_2.99 (a version no glibc has): the extension and the library it loads both
// require it of libc.so.6, and the extension calls a symbol of that version. The import reports
// the extension's need; the library's need and the symbol follow from it.
TEST_F(FirstErrorCauses, OneFutureGlibcVersionIsOneCause) {
  fs::create_directories(tmp_ / "build/stub");
  std::string map = tmp_ / "build/glibc.map";
  std::ofstream(map) << "GLIBC_2.99 { global: future_fn; };\n";
  std::string stub = tmp_ / "build/stub/libc.so.6";
  build_shared(stub, "int future_fn(void) { return 0; }",
               "-nostdlib -Wl,-soname,libc.so.6 -Wl,--version-script=" + quote(map), tmp_);
  std::string dep = tmp_ / "build/futurepkg/libdep.so";
  build_shared(dep, "int future_fn(void); int dep_fn(void) { return future_fn(); }",
               "-Wl,-soname,libdep.so " + quote(stub), tmp_);
  std::string ext = tmp_ / ("build/futurepkg/_f" + suffix_);
  build_ext(ext, "_f", "int future_fn(void); int dep_fn(void);", "future_fn() + dep_fn()",
            quote(dep) + " " + quote(stub) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
  auto venv = venv_with_pip();
  venv->install({platlib_wheel("futurepkg", "1.0", {{"futurepkg/_f" + suffix_, ext}, {"futurepkg/libdep.so", dep}},
                               {{"futurepkg/__init__.py", ""}})});
  std::string real = venv->import("futurepkg._f");
  ASSERT_NE(real.find("version `GLIBC_2.99' not found (required by " + venv->site() + "/futurepkg/_f"),
            std::string::npos)
      << real;

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  json cause;
  for (const json& f : findings(report, "missing-version"))
    if (f["message"] == real) cause = f;
  ASSERT_FALSE(cause.is_null()) << real << "\n" << report.dump(1);
  expect_one_cause(report, cause, report["findings"].size() - 1);
}

// A failure that does not depend on the first one is a cause of its own. The extension needs
// libmissing.so.1 (not shipped) and liba.so, whose helper@LIBB_1 the loaded libb.so (version
// node LIBB_1) no longer defines. The import reports the missing library; once it is there, the
// import reports helper: neither fix mends the other, so both are causes.
TEST_F(FirstErrorCauses, AVersionedSymbolOfALoadedLibraryIsACauseOfItsOwn) {
  fs::create_directories(tmp_ / "build/old");
  std::string map = tmp_ / "build/libb.map";
  std::ofstream(map) << "LIBB_1 { global: helper; other; local: *; };\n";
  std::string old_b = tmp_ / "build/old/libb.so";
  build_shared(old_b, "int helper(void) { return 1; } int other(void) { return 2; }",
               "-Wl,-soname,libb.so -Wl,--version-script=" + quote(map), tmp_);
  std::string b = tmp_ / "build/abpkg/libb.so";
  build_shared(b, "int other(void) { return 2; }", "-Wl,-soname,libb.so -Wl,--version-script=" + quote(map), tmp_);
  std::string a = tmp_ / "build/abpkg/liba.so";
  build_shared(a, "int helper(void); int a_fn(void) { return helper(); }",
               "-Wl,-soname,liba.so " + quote(old_b) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", tmp_);
  std::string missing = tmp_ / "build/missing/libmissing.so.1";
  build_shared(missing, "int m_fn(void) { return 3; }", "-Wl,-soname,libmissing.so.1", tmp_);
  std::string ext = tmp_ / ("build/abpkg/_e" + suffix_);
  build_ext(ext, "_e", "int a_fn(void); int m_fn(void);", "a_fn() + m_fn()",
            quote(a) + " " + quote(missing) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN'");
  auto venv = venv_with_pip();
  venv->install(
      {platlib_wheel("abpkg", "1.0", {{"abpkg/_e" + suffix_, ext}, {"abpkg/liba.so", a}, {"abpkg/libb.so", b}},
                     {{"abpkg/__init__.py", ""}})});
  std::string real = venv->import("abpkg._e");
  ASSERT_EQ(real, "libmissing.so.1: cannot open shared object file: No such file or directory");

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  auto library = findings(report, "missing-library");
  auto symbol = findings(report, "undefined-symbol");
  ASSERT_EQ(library.size(), 1u) << report.dump(1);
  ASSERT_EQ(symbol.size(), 1u) << report.dump(1);
  EXPECT_EQ(library[0]["message"], real);
  EXPECT_EQ(symbol[0]["symbol"], "helper");
  EXPECT_FALSE(symbol[0].contains("caused_by")) << symbol[0].dump(1);
  EXPECT_EQ(report["summary"]["causes"], 2) << report["summary"].dump();

  // The referee once the first is fixed: the second, in ld.so's words.
  fs::copy_file(missing, venv->site() + "/abpkg/libmissing.so.1");
  EXPECT_EQ(venv->import("abpkg._e"), venv->site() + "/abpkg/liba.so: undefined symbol: helper, version LIBB_1");
}

}  // namespace
}  // namespace envdoctor::test
