// Which CUDA runtime is which, from the names wheels really use: CUDA 11's libcudart.so.11.0 (the
// same name for every 11.x: the package version tells the release), a runtime renamed by a wheel
// repair tool (libcudart-1a2b3c4d.so.12), and a libcuda.so.1 copy that no search reaches (it must
// not pass for a forward-compatibility driver). gcc-built stand-ins in real wheels and venvs.
#include <gtest/gtest.h>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class RuntimeNames : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || !have_tool("python3") || !python3_facts().pip)
      GTEST_SKIP() << "needs gcc, python3 and pip";
    fs::create_directories(tmp_ / "wheels");
  }
  // A stand-in runtime with SONAME `soname`, and a package `user` whose library needs it through
  // an RPATH to `rel_dir` (relative to site-packages).
  std::vector<std::string> runtime_and_user(const std::string& runtime_pkg, const std::string& version,
                                            const std::string& rel_dir, const std::string& soname,
                                            const std::string& user) {
    std::string rt = tmp_ / ("build/" + soname);
    build_shared(rt, "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }", "-Wl,-soname," + soname, tmp_);
    std::string use = tmp_ / ("build/" + user + "/libuse.so");
    build_shared(use, "int cudaGetDeviceCount(int*); int use(void){int n; return cudaGetDeviceCount(&n);}",
                 quote(rt) + " -Wl,-rpath,'$ORIGIN/../" + rel_dir + "'", tmp_);
    return {make_wheel(tmp_ / "wheels", {{"name", runtime_pkg},
                                         {"version", version},
                                         {"tag", "py3-none-manylinux_2_17_x86_64"},
                                         {"purelib", false},
                                         {"paths", {{rel_dir + "/" + soname, rt}}}}),
            make_wheel(tmp_ / "wheels", {{"name", user},
                                         {"version", "1.0"},
                                         {"tag", "py3-none-manylinux_2_17_x86_64"},
                                         {"purelib", false},
                                         {"requires", {runtime_pkg}},
                                         {"paths", {{user + "/libuse.so", use}}}})};
  }
  std::vector<json> too_old(const json& report) {
    std::vector<json> out;
    for (const json& f : report["findings"])
      if (f["code"] == "cuda-driver-too-old") out.push_back(f);
    return out;
  }
  TempDir tmp_;
};

TEST_F(RuntimeNames, Cuda11RuntimeIsItsPackagesRelease) {
  auto wheels = runtime_and_user("nvidia-cuda-runtime-cu11", "11.8.89", "nvidia/cuda_runtime/lib", "libcudart.so.11.0",
                                 "usecu11");
  Venv venv(tmp_, "v");
  venv.install(wheels);
  int status = -1;
  json report = venv.check(&status, "--driver 450.51.06 --gpu sm_80");
  auto found = too_old(report);
  ASSERT_EQ(found.size(), 1u) << report.dump(1);
  EXPECT_NE(found[0]["message"].get<std::string>().find("CUDA runtime 11.8"), std::string::npos) << found[0];
  EXPECT_EQ(status, 1);
}

TEST_F(RuntimeNames, RepairedRuntimeNameIsStillTheRuntime) {
  auto wheels = runtime_and_user("hashpkg-runtime", "1.0", "hashpkg.libs", "libcudart-1a2b3c4d.so.12", "hashpkg");
  Venv venv(tmp_, "v");
  venv.install(wheels);
  int status = -1;
  json report = venv.check(&status, "--driver 418.39 --gpu sm_80");
  EXPECT_EQ(too_old(report).size(), 1u) << report.dump(1);
  EXPECT_EQ(status, 1);
}

TEST_F(RuntimeNames, LibcudaNoSearchReachesIsNoForwardCompatibility) {
  auto wheels =
      runtime_and_user("nvidia-cuda-runtime-cu12", "12.8.90", "nvidia/cuda_runtime/lib", "libcudart.so.12", "usecu12");
  std::string libcuda = tmp_ / "build/libcuda.so.580.65.06";
  build_shared(libcuda, "int cuInit(unsigned f) { return 0; }", "-Wl,-soname,libcuda.so.1", tmp_);
  wheels.push_back(make_wheel(tmp_ / "wheels", {{"name", "strayfix"},
                                                {"version", "1.0"},
                                                {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                {"purelib", false},
                                                {"paths", {{"strayfix/_vendor/libcuda.so.580.65.06", libcuda}}}}));
  Venv venv(tmp_, "v");
  venv.install(wheels);
  int status = -1;
  json report = venv.check(&status, "--driver 470.42.01 --gpu sm_80");
  EXPECT_EQ(too_old(report).size(), 1u) << report.dump(1);
  EXPECT_EQ(status, 1);
}

}  // namespace
}  // namespace envdoctor::test
