// A library this user may not read (issue 49, item 4). Run as an unprivileged user (nobody, by
// setpriv), a mode-000 copy of the library an extension needs: the real import fails with
// "libdmg.so: cannot open shared object file: No such file or directory" (the search goes on past
// the copy it cannot open, and finds none), and ld.so opening the file by its path says
// "Permission denied". envdoctor says both in the loader's words: the file is invalid-elf with
// "cannot open shared object file: Permission denied" and a hint about permissions (no reinstall:
// the file may well be whole), and the extension's missing-library names it as its cause.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "fixtures/fixture.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

TEST(UnreadableFile, ModeZeroLibraryAsAnUnprivilegedUser) {
  const std::string python = "/usr/bin/python3";
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (!have_tool("gcc") || !have_tool("setpriv") || access(python.c_str(), X_OK) != 0 || geteuid() != 0)
    GTEST_SKIP() << "needs gcc, setpriv, " << python << " and root (to become nobody)";
  CommandResult include = run(python + " -c 'import sysconfig; print(sysconfig.get_paths()[\"include\"])'");
  std::string inc = include.out.substr(0, include.out.find('\n'));
  if (!fs::exists(inc + "/Python.h")) GTEST_SKIP() << "needs Python.h for " << python;
  TempDir tmp;
  std::string venv = tmp / "v";
  ASSERT_EQ(run(python + " -m venv --without-pip " + quote(venv)).status, 0);
  CommandResult site =
      run(quote(venv + "/bin/python") + " -c 'import sysconfig; print(sysconfig.get_paths()[\"platlib\"])'");
  std::string pkg = site.out.substr(0, site.out.find('\n')) + "/pp";
  build_shared(pkg + "/libdmg.so", "int dmg(void) { return 7; }", "-Wl,-soname,libdmg.so", tmp);
  build_shared(pkg + "/_p.so",
               "#include <Python.h>\nint dmg(void);\nstatic struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_p\", 0, "
               "-1, 0};\nPyMODINIT_FUNC PyInit__p(void) { dmg(); return PyModule_Create(&d); }\n",
               "-I" + quote(inc) + " " + quote(pkg + "/libdmg.so") + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN'", tmp);
  std::ofstream(pkg + "/__init__.py") << "";
  ASSERT_EQ(run("chmod -R a+rX " + quote(tmp.path().string()) + " && chmod 000 " + quote(pkg + "/libdmg.so")).status,
            0);

  CommandResult real = run("cd / && " + as_nobody + quote(venv + "/bin/python") + " -c 'import pp._p'");
  ASSERT_NE(real.err.find("ImportError: libdmg.so: cannot open shared object file: No such file or directory"),
            std::string::npos)
      << real.err;
  CommandResult ld_so = run(as_nobody + "/lib64/ld-linux-x86-64.so.2 --list " + quote(pkg + "/libdmg.so"));
  const std::string denied = pkg + "/libdmg.so: cannot open shared object file: Permission denied";
  ASSERT_NE(ld_so.err.find(denied), std::string::npos) << ld_so.err;

  CommandResult check = run(as_nobody + "env HOME=" + quote(tmp.path().string()) + " " + quote(envdoctor()) +
                            " check --json --python " + quote(venv + "/bin/python"));
  EXPECT_EQ(check.status, 1) << check.err;
  json report = json::parse(check.out);
  json file, consumer;
  for (const json& f : report["findings"]) {
    if (f["code"] == "invalid-elf") file = f;
    if (f["code"] == "missing-library") consumer = f;
  }
  ASSERT_FALSE(file.is_null()) << report.dump(1);
  EXPECT_EQ(file["message"], denied);
  EXPECT_EQ(file["hint"], "the loader cannot open " + pkg +
                              "/libdmg.so (Permission denied) as this user: make it readable to whoever runs "
                              "Python (ls -l it; chmod a+r)");
  EXPECT_FALSE(file.contains("fix_command")) << file.dump(1);
  ASSERT_FALSE(consumer.is_null()) << report.dump(1);
  EXPECT_EQ(consumer["message"], "libdmg.so: cannot open shared object file: No such file or directory");
  EXPECT_EQ(consumer["caused_by"], json({{"code", "invalid-elf"}, {"file", pkg + "/libdmg.so"}, {"package", nullptr}}));
  EXPECT_EQ(report["summary"]["causes"], 1);

  CommandResult ldd = run(as_nobody + quote(envdoctor()) + " ldd " + quote(pkg + "/libdmg.so"));
  EXPECT_EQ(ldd.err, denied + "\n");
}

}  // namespace
}  // namespace envdoctor::test
