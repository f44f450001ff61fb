// A library cut short after its headers (issue 49, item 2): an interrupted copy or a full disk
// leaves the ELF header and program headers, and nothing behind them. The real import dies of
// SIGBUS (ld.so maps the segments past the end of the file and reads the dynamic section there).
// envdoctor reports invalid-elf on that file, saying the process dies of SIGBUS, with
// the fix that brings the file back (reinstall its package); no symbol errors, no "statically
// linked", no fix of another package; the extension's load names it as its cause.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class DamagedLibrary : public VenvTest {};

TEST_F(DamagedLibrary, CutShortAfterItsHeadersIsABusErrorOnThatFile) {
  std::string lib = tmp_ / "build/libcut.so.1";
  build_shared(lib, "#include <stdio.h>\nint cut_fn(void) { return puts(\"cut\"); }", "-Wl,-soname,libcut.so.1", tmp_);
  std::string ext = tmp_ / ("build/cutuser/_c" + suffix_);
  build_ext(ext, "_c", "int cut_fn(void);", "cut_fn()",
            quote(lib) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../cutlib'");
  auto venv = venv_with_pip();
  venv->install(
      {platlib_wheel("cutlib", "1.0", {{"cutlib/libcut.so.1", lib}}),
       platlib_wheel("cutuser", "1.0", {{"cutuser/_c" + suffix_, ext}}, {{"cutuser/__init__.py", ""}}, {"cutlib"})});
  ASSERT_EQ(venv->import("cutuser._c"), "");
  const std::string installed = venv->site() + "/cutlib/libcut.so.1";
  fs::resize_file(installed, 4096);

  CommandResult real = run("cd / && " + quote(venv->python()) + " -c 'import cutuser._c'");
  EXPECT_EQ(real.status, 128 + 7) << real.err;  // the shell's status for SIGBUS

  CommandResult ldd = run(quote(envdoctor()) + " ldd " + quote(installed));
  EXPECT_EQ(ldd.out, "");
  EXPECT_EQ(ldd.err.rfind(installed + ": Bus error: the file is 4096 bytes (cut short?), and its dynamic section", 0),
            0u)
      << ldd.err;
  EXPECT_EQ(ldd.status, 1);

  int status = -1;
  json report = venv->check(&status);
  EXPECT_EQ(status, 1);
  auto errors = std::vector<json>();
  for (const json& f : report["findings"])
    if (f["severity"] == "error") errors.push_back(f);
  // The file's own load, and the extension's load that needs it, which names it as its cause.
  ASSERT_EQ(errors.size(), 2u) << report.dump(1);
  if (errors[0].contains("caused_by")) std::swap(errors[0], errors[1]);
  EXPECT_FALSE(errors[0].contains("caused_by")) << errors[0].dump(1);
  EXPECT_EQ(errors[1]["caused_by"], json({{"code", "invalid-elf"}, {"file", installed}, {"package", "cutlib"}}))
      << errors[1].dump(1);
  EXPECT_EQ(errors[1]["fix_command"], errors[0]["fix_command"]);
  EXPECT_EQ(report["summary"]["causes"], 2);  // and the size warning, whose fix is the same
  EXPECT_EQ(errors[0]["code"], "invalid-elf");
  EXPECT_EQ(errors[0]["file"], installed);
  EXPECT_EQ(errors[0]["package"], "cutlib");
  std::string message = errors[0]["message"];
  EXPECT_NE(message.find("dies of SIGBUS when the loader reads it"), std::string::npos) << message;
  std::string fix = errors[0].value("fix_command", "");
  EXPECT_NE(fix.find("--force-reinstall"), std::string::npos) << fix;
  EXPECT_NE(fix.find("cutlib"), std::string::npos) << fix;
  EXPECT_TRUE(findings(report, "undefined-symbol").empty()) << report.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
