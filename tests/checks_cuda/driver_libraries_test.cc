// The NVIDIA driver's libraries (libcuda.so.1, libnvidia-ml.so.1) are not a package's
// (issue 26, item 4). A wheel whose library NEEDs libcuda.so.1 (linked against the toolkit's own
// stub, /usr/local/cuda/lib64/stubs/libcuda.so, SONAME libcuda.so.1) and one that NEEDs
// libnvidia-ml.so.1: with `--driver` they are present for the model, so no error and an OK NHC
// line; on a machine without a driver, one note, no error per consumer. The referees: the real
// dlopen, which fails here for want of libcuda.so.1 and loads every file once the stub stands in
// for the driver on LD_LIBRARY_PATH (the stub defines what the driver's libcuda defines).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda/driver.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/loader_referee.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::string kStubs = "/usr/local/cuda/lib64/stubs";

class DriverLibraries : public VenvTest {
 protected:
  // drvpkg: libdrv.so NEEDs libcuda.so.1 (cuInit); libuser.so NEEDs libdrv.so only and calls
  // cuDriverGetVersion, which binds to libcuda.so.1 in its scope. monpkg: libmon.so NEEDs
  // libnvidia-ml.so.1 (a gcc stand-in with that SONAME, linked against and not installed).
  std::vector<std::string> driver_wheels() {
    std::string drv = tmp_ / "build/drvpkg/libdrv.so";
    build_shared(drv, "int cuInit(unsigned); int drv_init(void) { return cuInit(0); }",
                 "-Wl,-soname,libdrv.so -Wl,--no-as-needed -L" + kStubs + " -lcuda", tmp_);
    std::string user = tmp_ / "build/drvpkg/libuser.so";
    build_shared(user,
                 "int cuDriverGetVersion(int*); int drv_init(void);\n"
                 "int user_version(void) { int v = 0; drv_init(); cuDriverGetVersion(&v); return v; }",
                 "-Wl,--no-as-needed " + quote(drv) + " -Wl,-rpath,'$ORIGIN'", tmp_);
    std::string nvml = tmp_ / "build/nvml/libnvidia-ml.so.1";
    build_shared(nvml, "int nvmlInit_v2(void) { return 0; }", "-Wl,-soname,libnvidia-ml.so.1", tmp_);
    std::string mon = tmp_ / "build/monpkg/libmon.so";
    build_shared(mon, "int nvmlInit_v2(void); int mon(void) { return nvmlInit_v2(); }",
                 "-Wl,--no-as-needed " + quote(nvml), tmp_);
    return {platlib_wheel("drvpkg", "1.0", {{"drvpkg/libdrv.so", drv}, {"drvpkg/libuser.so", user}}),
            platlib_wheel("monpkg", "1.0", {{"monpkg/libmon.so", mon}})};
  }
};

TEST_F(DriverLibraries, DriverLibrariesArePresentWithDriverAndOneNoteWithout) {
  if (!fs::exists(kStubs + "/libcuda.so") || !fs::exists("/usr/local/cuda/lib64/libcudart.so.13"))
    GTEST_SKIP() << "needs the CUDA toolkit's " << kStubs << "/libcuda.so and lib64/libcudart.so.13";
  Venv venv(tmp_, "drv");
  venv.install(driver_wheels());
  std::string drv = venv.site() + "/drvpkg/libdrv.so", user = venv.site() + "/drvpkg/libuser.so";
  std::string mon = venv.site() + "/monpkg/libmon.so";
  ASSERT_NE(run("readelf -d " + quote(drv) + " | grep -F '[libcuda.so.1]'").status, 1)
      << "libdrv.so needs libcuda.so.1";

  // The referee with the driver's libraries present: the stub for libcuda.so.1, the stand-in for
  // libnvidia-ml.so.1, on LD_LIBRARY_PATH.
  fs::create_directories(tmp_ / "driver");
  fs::copy_file(kStubs + "/libcuda.so", tmp_ / "driver/libcuda.so.1");
  fs::copy_file(tmp_ / "build/nvml/libnvidia-ml.so.1", tmp_ / "driver/libnvidia-ml.so.1");
  std::string driver_dir = tmp_ / "driver";
  for (const std::string& f : {drv, user, mon}) EXPECT_EQ(referee_dlopen(tmp_, f, &driver_dir), "ok") << f;

  // With --driver, the model has them too: nothing is wrong, and NHC says OK.
  int status = -1;
  json report = venv.check(&status, "--gpu sm_90 --driver 595.45.04");
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
  CommandResult nhc = venv.envdoctor_run("check", "--gpu sm_90 --driver 595.45.04 --format nhc");
  EXPECT_EQ(nhc.out, "envdoctor: OK\n") << nhc.err;
  CommandResult text = venv.envdoctor_run("check", "--gpu sm_90 --driver 595.45.04");
  EXPECT_NE(text.out.find("note: libcuda.so.1, libnvidia-ml.so.1 are the NVIDIA driver's, needed by 2 files: "
                          "libdrv.so, libmon.so; taken as present, from driver 595.45.04 (--driver): on the host the "
                          "driver installs them, in a container the NVIDIA container toolkit mounts them\n"),
            std::string::npos)
      << text.out;

  // A library that is no driver's is still missing-library, and leads the NHC line.
  std::string lost = tmp_ / "build/lost/libnotthere.so.1";
  build_shared(lost, "int lost(void) { return 1; }", "-Wl,-soname,libnotthere.so.1", tmp_);
  std::string needs_lost = tmp_ / "build/lostpkg/liblost.so";
  build_shared(needs_lost, "int lost(void); int f(void) { return lost(); }", "-Wl,--no-as-needed " + quote(lost), tmp_);
  venv.install({platlib_wheel("lostpkg", "1.0", {{"lostpkg/liblost.so", needs_lost}})});
  EXPECT_EQ(referee_dlopen(tmp_, venv.site() + "/lostpkg/liblost.so", &driver_dir),
            "libnotthere.so.1: cannot open shared object file: No such file or directory");
  nhc = venv.envdoctor_run("check", "--gpu sm_90 --driver 595.45.04 --format nhc");
  EXPECT_EQ(nhc.out, "envdoctor: missing-library libnotthere.so.1 lostpkg\n") << nhc.err;
  venv.uninstall("lostpkg");

  // This machine without a driver: the real dlopen fails for libcuda.so.1, and the report says
  // so once, as a note; no consumer gets an error of its own.
  if (cuda::detect_driver().version) GTEST_SKIP() << "this machine has an NVIDIA driver";
  EXPECT_EQ(referee_dlopen(tmp_, drv), "libcuda.so.1: cannot open shared object file: No such file or directory");
  report = venv.check(&status, "--gpu sm_90");
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
  text = venv.envdoctor_run("check", "--gpu sm_90");
  EXPECT_NE(text.out.find("note: no NVIDIA driver: the GPU libraries cannot load here (libcuda.so.1, "
                          "libnvidia-ml.so.1 are the NVIDIA driver's, needed by 2 files: libdrv.so, libmon.so); pass "
                          "--driver VERSION to check the environment for a GPU node\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("no installed package provides libcuda.so.1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("All clear: every library here will load where the NVIDIA driver is.\n"), std::string::npos)
      << text.out;
  nhc = venv.envdoctor_run("check", "--gpu sm_90 --format nhc");
  EXPECT_EQ(nhc.out, "envdoctor: OK\n") << nhc.err;

  // Said once: a CUDA runtime in the environment adds no second note about the driver.
  venv.install({platlib_wheel("nvidia-cuda-runtime", "13.0.96",
                              {{"nvidia/cu13/lib/libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13"}})});
  text = venv.envdoctor_run("check", "--gpu sm_90");
  size_t first = text.out.find("no NVIDIA driver");
  EXPECT_NE(first, std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("no NVIDIA driver", first + 1), std::string::npos) << text.out;

  // cuda-compat's libcuda (the stub, under the real file name of a 580.65.06 driver) on
  // LD_LIBRARY_PATH: the loader finds libcuda.so.1, and the note says what it still needs.
  fs::create_directories(tmp_ / "compat");
  fs::copy_file(kStubs + "/libcuda.so", tmp_ / "compat/libcuda.so.580.65.06");
  fs::create_symlink("libcuda.so.580.65.06", tmp_ / "compat/libcuda.so.1");
  std::string compat = tmp_ / "compat";
  EXPECT_EQ(referee_dlopen(tmp_, user, &compat), "ok");
  text = venv.envdoctor_run("check", "--gpu sm_90 --ld-library-path " + quote(compat));
  EXPECT_NE(text.out.find("note: no NVIDIA driver: the forward-compatibility libcuda " +
                          fs::canonical(tmp_ / "compat/libcuda.so.580.65.06").string() +
                          " (LD_LIBRARY_PATH) implements driver 580.65.06 but runs only over an NVIDIA kernel module, "
                          "and on data-center GPUs (error 804, cudaErrorCompatNotSupportedOnDevice, on others)\n"),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace envdoctor::test
