// `check --without PKG` and `check --with WHEEL` against the referee: each simulation is then
// performed for real with pip on the same venv, and the prediction is compared with what pip
// did (the findings of a plain check afterwards) and with real imports.
#include <gtest/gtest.h>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// VenvTest's fixtures (tests/fixtures/venv.h), checked with --with and --without.
class SimulateTest : public VenvTest {};

// Uninstalling one of two owners of a library file that a torch-like package needs: the
// prediction equals what a plain check says after the real `pip uninstall`, and pip removed
// exactly the files the simulation removed.
TEST_F(SimulateTest, WithoutOneOfTwoOwners) {
  std::string lib = tmp_ / "build/libfakecudnn.so.9";
  build_shared(lib, "int cudnn_fn(void) { return 9; }", "-Wl,-soname,libfakecudnn.so.9", tmp_);
  std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
  build_ext(ext, "_C", "int cudnn_fn(void);", "cudnn_fn()", quote(lib) + " -Wl,-rpath,'$ORIGIN/../fakenv/cudnn/lib'");
  auto owner = [&](const std::string& name) {
    return platlib_wheel(name, "9.1", {{"fakenv/cudnn/lib/libfakecudnn.so.9", lib}});
  };
  std::string torch = platlib_wheel("faketorch", "2.0", {{"faketorch/_C" + suffix_, ext}},
                                    {{"faketorch/__init__.py", ""}}, {"fake-cudnn-cu13"});
  Venv venv(tmp_, "v");
  venv.install({owner("fake-cudnn-cu12"), owner("fake-cudnn-cu13"), torch});

  int status = -1;
  json predicted = venv.check(&status, "--without fake-cudnn-cu12");
  EXPECT_EQ(status, 1) << predicted.dump(1);
  auto fresh = new_findings(predicted);
  std::set<std::string> codes;
  for (const json& f : fresh) codes.insert(f["code"]);
  EXPECT_EQ(codes, (std::set<std::string>{"missing-library", "record-missing-file"})) << predicted.dump(1);
  // The warning about the shared file was there before and is gone after: not new.
  for (const json& f : predicted["findings"]) EXPECT_NE(f["code"], "file-owned-twice");

  std::set<std::string> before = files_under(venv.site());
  venv.uninstall("fake-cudnn-cu12");
  std::set<std::string> after = files_under(venv.site());
  std::set<std::string> removed;
  for (const std::string& f : before)
    if (!after.count(f)) removed.insert(f);
  EXPECT_TRUE(removed.count("fakenv/cudnn/lib/libfakecudnn.so.9")) << "pip kept the shared file";

  json real = venv.check(&status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(plain(predicted), plain(real)) << "predicted:\n" << predicted.dump(1) << "\nreal:\n" << real.dump(1);
  for (const json& f : fresh)
    if (f["code"] == "missing-library") EXPECT_EQ(venv.import("faketorch._C"), f["message"].get<std::string>());
}

TEST_F(SimulateTest, WithoutAPackageNothingNeedsChangesNothing) {
  std::string lonely = wheel({{"name", "leaf"}, {"version", "1.0"}, {"files", {{"leaf/__init__.py", "x = 1\n"}}}});
  Venv venv(tmp_, "v");
  venv.install({lonely});
  int status = -1;
  json predicted = venv.check(&status, "--without leaf");
  EXPECT_EQ(status, 0) << predicted.dump(1);
  EXPECT_TRUE(new_findings(predicted).empty()) << predicted.dump(1);
  EXPECT_EQ(predicted["environment"]["packages"], 0);
}

TEST_F(SimulateTest, WithoutAPackageThatIsNotInstalledIsAnError) {
  Venv venv(tmp_, "v");
  CommandResult r = run(quote(envdoctor()) + " check --python " + quote(venv.python()) + " --without nosuchpkg");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("nosuchpkg is not installed"), std::string::npos) << r.err;
}

// A wheel that overwrites a library with a build lacking a symbol its consumer needs: the new
// undefined symbol is predicted before pip runs, and the real install then fails the import
// with the same words.
TEST_F(SimulateTest, WithAWheelThatDropsASymbol) {
  auto [core1, core2, user] = dropped_symbol_wheels();
  Venv venv(tmp_, "v");
  venv.install({core1, user});
  EXPECT_EQ(venv.import("userpkg._u"), "");

  int status = -1;
  json predicted = venv.check(&status, "--with " + quote(core2));
  EXPECT_EQ(status, 1) << predicted.dump(1);
  auto fresh = new_findings(predicted);
  ASSERT_EQ(fresh.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(fresh[0]["code"], "undefined-symbol");
  EXPECT_EQ(fresh[0]["symbol"], "core_b");
  EXPECT_EQ(fresh[0]["package"], "userpkg");

  CommandResult r = run("python3 -m pip --python " + quote(venv.python()) +
                        " install -q --no-index --no-deps --disable-pip-version-check " + quote(core2));
  ASSERT_EQ(r.status, 0) << r.err;
  json real = venv.check(&status);
  EXPECT_EQ(plain(predicted), plain(real)) << "predicted:\n" << predicted.dump(1) << "\nreal:\n" << real.dump(1);
  EXPECT_EQ(venv.import("userpkg._u"), fresh[0]["message"].get<std::string>());
}

// An extension wheel linked against libcudart.so.12 (versioned symbols, as the real one has)
// into an environment whose torch-like package runs on the real libcudart.so.13: pip installs
// it, the import fails. With a libcudart.so.12 -> libcudart.so.13 symlink "fix" in place, the
// failure becomes a missing version, as the loader says.
TEST_F(SimulateTest, WithAnExtensionForCuda12InACuda13Environment) {
  const std::string real13 = "/usr/local/cuda/lib64/libcudart.so.13";
  if (!fs::exists(real13)) GTEST_SKIP() << "needs " << real13;
  std::string stub12 = tmp_ / "build/12/libcudart.so.12";
  std::string script =
      tmp_.write("build/12/cudart.map", "libcudart.so.12 { global: cudaGetDeviceCount; local: *; };\n");
  build_shared(stub12, "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }",
               "-Wl,-soname,libcudart.so.12 -Wl,--version-script," + quote(script), tmp_);
  std::string ext = tmp_ / ("build/mamba/_ssm" + suffix_);
  build_ext(ext, "_ssm", "int cudaGetDeviceCount(int*);", "({int n; cudaGetDeviceCount(&n); n;})",
            quote(stub12) + " -Wl,-rpath,'$ORIGIN/../nvidia/cu13/lib'");
  std::string runtime13 =
      platlib_wheel("nvidia-cuda-runtime", "13.0.48", {{"nvidia/cu13/lib/libcudart.so.13", real13}});
  std::string mamba = platlib_wheel("mamba-ssm", "2.2.2", {{"mamba_ssm/_ssm" + suffix_, ext}},
                                    {{"mamba_ssm/__init__.py", ""}}, {"nvidia-cuda-runtime"});
  Venv venv(tmp_, "v");
  venv.install({runtime13});

  int status = -1;
  json predicted = venv.check(&status, "--with " + quote(mamba));
  EXPECT_EQ(status, 1) << predicted.dump(1);
  auto fresh = new_findings(predicted);
  ASSERT_EQ(fresh.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(fresh[0]["code"], "missing-library");
  EXPECT_EQ(fresh[0]["library"], "libcudart.so.12");
  EXPECT_NE(fresh[0]["hint"].get<std::string>().find("is shipped by nvidia-cuda-runtime-cu12"), std::string::npos)
      << fresh[0]["hint"];
  EXPECT_EQ(fresh[0]["fix_command"], "python3 -m pip --python " + venv.python() + " install nvidia-cuda-runtime-cu12");
  venv.install({mamba});
  EXPECT_EQ(venv.import("mamba_ssm._ssm"), fresh[0]["message"].get<std::string>());

  // The symlink "fix": the file name resolves now, the symbol version cannot.
  fs::create_symlink("libcudart.so.13", venv.site() + "/nvidia/cu13/lib/libcudart.so.12");
  json fixed = venv.check(&status);
  EXPECT_EQ(status, 1) << fixed.dump(1);
  std::vector<json> versions;
  for (const json& f : fixed["findings"])
    if (f["code"] == "missing-version") versions.push_back(f);
  ASSERT_EQ(versions.size(), 1u) << fixed.dump(1);
  EXPECT_EQ(versions[0]["version"], "libcudart.so.12");
  EXPECT_NE(versions[0]["hint"].get<std::string>().find("is really libcudart.so.13"), std::string::npos)
      << versions[0]["hint"];
  EXPECT_EQ(venv.import("mamba_ssm._ssm"), versions[0]["message"].get<std::string>());
}

// pip refuses a wheel for another platform; so does the simulation, in pip's own words.
TEST_F(SimulateTest, WithAWheelForAnotherPlatform) {
  std::string win = wheel({{"name", "winonly"},
                           {"version", "1.0"},
                           {"tag", "cp311-cp311-win_amd64"},
                           {"files", {{"winonly/__init__.py", ""}}}});
  Venv venv(tmp_, "v");
  int status = -1;
  json predicted = venv.check(&status, "--with " + quote(win));
  EXPECT_EQ(status, 1) << predicted.dump(1);
  auto fresh = new_findings(predicted);
  ASSERT_EQ(fresh.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(fresh[0]["code"], "wheel-tag-unsupported");
  EXPECT_EQ(fresh[0]["package"], "winonly");
  EXPECT_EQ(predicted["environment"]["packages"], 0) << "nothing is installed";
  CommandResult pip = run("python3 -m pip --python " + quote(venv.python()) +
                          " install --no-index --no-deps --disable-pip-version-check " + quote(win));
  EXPECT_NE(pip.status, 0);
  EXPECT_NE(pip.err.find("ERROR: " + fresh[0]["message"].get<std::string>()), std::string::npos) << pip.err;
}

TEST_F(SimulateTest, WithSomethingThatIsNotAWheelIsExitTwoAndWritesNothing) {
  std::string junk = tmp_.write("wheels/junk-1.0-py3-none-any.whl", "this is not a zip archive");
  Venv venv(tmp_, "v");
  std::set<std::string> before = files_under(tmp_.path().string());
  CommandResult r = run(quote(envdoctor()) + " check --python " + quote(venv.python()) + " --with " + quote(junk));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("envdoctor: ", 0), 0u) << r.err;
  EXPECT_EQ(files_under(tmp_.path().string()), before);
}

// The replacement engineers attempt: uninstall the CUDA 12 owner and install the CUDA 13 one in
// one go. Both owners install the same file, so the library survives: nothing new breaks.
TEST_F(SimulateTest, WithoutOneOwnerWithTheOther) {
  std::string lib = tmp_ / "build/libfakecudnn.so.9";
  build_shared(lib, "int cudnn_fn(void) { return 9; }", "-Wl,-soname,libfakecudnn.so.9", tmp_);
  std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
  build_ext(ext, "_C", "int cudnn_fn(void);", "cudnn_fn()", quote(lib) + " -Wl,-rpath,'$ORIGIN/../fakenv/cudnn/lib'");
  std::string cu12 = platlib_wheel("fake-cudnn-cu12", "9.1", {{"fakenv/cudnn/lib/libfakecudnn.so.9", lib}});
  std::string cu13 = platlib_wheel("fake-cudnn-cu13", "9.13", {{"fakenv/cudnn/lib/libfakecudnn.so.9", lib}});
  std::string torch = platlib_wheel("faketorch", "2.0", {{"faketorch/_C" + suffix_, ext}},
                                    {{"faketorch/__init__.py", ""}}, {"fake-cudnn-cu12"});
  Venv venv(tmp_, "v");
  venv.install({cu12, torch});
  int status = -1;
  json predicted = venv.check(&status, "--without fake-cudnn-cu12 --with " + quote(cu13));
  EXPECT_EQ(status, 0) << predicted.dump(1);
  EXPECT_TRUE(new_findings(predicted).empty()) << predicted.dump(1);

  venv.uninstall("fake-cudnn-cu12");
  venv.install({cu13});
  json real = venv.check(&status);
  EXPECT_EQ(plain(predicted), plain(real)) << "predicted:\n" << predicted.dump(1) << "\nreal:\n" << real.dump(1);
  EXPECT_EQ(venv.import("faketorch._C"), "");
}

// A wheel that writes an empty file over a library another package loads: not ELF, still what
// the loader reads next time.
TEST_F(SimulateTest, WithAWheelThatOverwritesALibraryWithJunk) {
  std::string core = tmp_ / "build/libcore.so";
  build_shared(core, "int core_fn(void) { return 1; }", "-Wl,-soname,libcore.so", tmp_);
  std::string ext = tmp_ / ("build/_core" + suffix_);
  build_ext(ext, "_core", "int core_fn(void);", "core_fn()", quote(core) + " -Wl,-rpath,'$ORIGIN/lib'");
  std::string sib = platlib_wheel("sib", "1.0", {{"sib/lib/libcore.so", core}, {"sib/_core" + suffix_, ext}},
                                  {{"sib/__init__.py", ""}});
  std::string other = wheel({{"name", "other"}, {"version", "1.0"}, {"files", {{"sib/lib/libcore.so", ""}}}});
  Venv venv(tmp_, "v");
  venv.install({sib});
  int status = -1;
  json predicted = venv.check(&status, "--with " + quote(other));
  EXPECT_EQ(status, 1) << predicted.dump(1);
  std::string message;
  for (const json& f : new_findings(predicted))
    if (f["code"] == "invalid-elf") message = f["message"];
  EXPECT_EQ(message, venv.site() + "/sib/lib/libcore.so: file too short") << predicted.dump(1);
  venv.install({other});
  EXPECT_EQ(venv.import("sib._core"), message);
}

// The import order a wheel's own __init__.py sets is read from the wheel: sib/_ext loads only
// because __init__.py imports sib/_core (which finds libcore.so) first.
TEST_F(SimulateTest, WithAPackageWhoseInitImportsASiblingFirst) {
  std::string core = tmp_ / "build/sib/libcore.so";
  build_shared(core, "int core_fn(void) { return 3; }", "-Wl,-soname,libcore.so", tmp_);
  std::string first = tmp_ / ("build/sib/_core" + suffix_);
  build_ext(first, "_core", "int core_fn(void);", "core_fn()", quote(core) + " -Wl,-rpath,'$ORIGIN/lib'");
  std::string second = tmp_ / ("build/sib/_ext" + suffix_);
  build_ext(second, "_ext", "int core_fn(void);", "core_fn()", quote(core));
  std::string sib = platlib_wheel(
      "sib", "1.0", {{"sib/lib/libcore.so", core}, {"sib/_core" + suffix_, first}, {"sib/_ext" + suffix_, second}},
      {{"sib/__init__.py", "from . import _core\nfrom . import _ext\n"}});
  Venv venv(tmp_, "v");
  int status = -1;
  json predicted = venv.check(&status, "--with " + quote(sib));
  EXPECT_EQ(status, 0) << predicted.dump(1);
  EXPECT_TRUE(new_findings(predicted).empty()) << predicted.dump(1);
  venv.install({sib});
  EXPECT_EQ(venv.import("sib._ext"), "");
}

}  // namespace
}  // namespace envdoctor::test
