// Where data/cuda.json ends, end to end: a CUDA runtime, a driver, a GPU and a PTX ISA newer than
// the tables are "unknown" (a note whose fix is "update envdoctor", exit 0), never a verdict
// stretched from the newest row; and what the tables do know is applied as NVIDIA states it
// (13.2 on its own 595 driver, PTX 9.4 against branch r615, CUDA 13 on a Volta GPU). The runtime
// is the toolkit's real libcudart.so.13, its release told by its package version or by the real
// file name a system toolkit gives it (libcudart.so.13.5.37), inside wheels installed by real pip.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "fixtures/cuda_fixtures.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

bool has_line(const std::string& out, const std::string& line) { return out.find(line) != std::string::npos; }

// The committed nvcc fixtures are built with -cudart none: nothing defines __cudaLaunchKernel and
// the rest, so they fail to load (dlopen says "undefined symbol: __cudaLaunchKernel"). A check of
// them exits 1 for that; true when those loader errors are the report's only errors.
bool only_undefined_symbol_errors(const std::string& out) {
  std::istringstream in(out);
  size_t errors = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  error ", 0) != 0) continue;
    ++errors;
    if (line.find("undefined-symbol") == std::string::npos) return false;
  }
  return errors > 0;
}

class BeyondTable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || !have_tool("python3") || !python3_facts().pip)
      GTEST_SKIP() << "needs gcc, python3 and pip";
    if (!fs::exists(kCudart13)) GTEST_SKIP() << "needs " << kCudart13;
    fs::create_directories(tmp_ / "wheels");
  }
  std::string wheel(const std::string& name, const std::string& version, const json& paths) {
    return make_wheel(tmp_ / "wheels",
                      {{"name", name}, {"version", version}, {"tag", kTag}, {"purelib", false}, {"paths", paths}});
  }
  std::string runtime_wheel(const std::string& version) {
    return wheel("nvidia-cuda-runtime", version, {{"nvidia/cu13/lib/libcudart.so.13", kCudart13}});
  }
  // A package whose library needs libcudart.so.13 and finds it through its RPATH in the wheel.
  std::string user_wheel() {
    std::string lib = tmp_ / "build/user13/libuse.so";
    build_shared(lib, "int cudaGetDeviceCount(int*); int use(void) { int n; return cudaGetDeviceCount(&n); }",
                 "-Wl,--no-as-needed " + quote(kCudart13) + " -Wl,-rpath,'$ORIGIN/../nvidia/cu13/lib'", tmp_);
    return wheel("user13", "1.0", {{"user13/libuse.so", lib}});
  }
  TempDir tmp_;
};

// nvidia-cuda-runtime 13.5.37 wraps a runtime the tables know no driver for. 13.2.86 (13.2 Update
// 2) on 595.45.04, the minimum of 13.2 GA, is fine: the false error the issue reported.
TEST_F(BeyondTable, RuntimeNewerThanTheTableIsUnknown) {
  Venv venv(tmp_, "rt135");
  venv.install({runtime_wheel("13.5.37"), user_wheel()});
  const std::string note =
      "note: libcudart.so.13 13.5 (nvidia-cuda-runtime 13.5.37) is newer than this envdoctor's CUDA table (13.4): "
      "driver requirement unknown; fix: update envdoctor";
  for (const char* driver : {"595.45.04", "575.57.08", "620.10"}) {
    CommandResult r = venv.envdoctor_run("check", std::string("--gpu sm_80 --driver ") + driver);
    EXPECT_EQ(r.status, 0) << driver << "\n" << r.out << r.err;
    EXPECT_TRUE(has_line(r.out, note)) << r.out;
    EXPECT_FALSE(has_line(r.out, "cuda-driver-too-old")) << r.out;
  }
  json j = json::parse(venv.envdoctor_run("cuda", "--json --driver 595.45.04").out);
  ASSERT_EQ(j["runtimes"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["runtimes"][0]["version"], "13.5");
  EXPECT_EQ(j["runtimes"][0]["driver_ok"], nullptr);
  EXPECT_EQ(j["runtimes"][0]["driver_required"], nullptr);
  CommandResult table = venv.envdoctor_run("cuda", "--driver 595.45.04");
  EXPECT_TRUE(has_line(table.out, "driver: 595.45.04 (--driver), runs CUDA 13.2 and older")) << table.out;
  EXPECT_TRUE(has_line(table.out, "newer than this envdoctor's CUDA table: update envdoctor")) << table.out;

  Venv known(tmp_, "rt132");
  known.install({runtime_wheel("13.2.86"), user_wheel()});
  CommandResult r = known.envdoctor_run("check", "--gpu sm_80 --driver 595.45.04");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(has_line(r.out, "minor-version")) << r.out;
  EXPECT_FALSE(has_line(r.out, "update envdoctor")) << r.out;
  // On a 590 driver 13.2 runs through minor-version compatibility (13.x from 580); on 575, not.
  r = known.envdoctor_run("check", "--gpu sm_80 --driver 590.48.01");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has_line(r.out,
                       "only through CUDA minor-version compatibility (13.x needs >= 580; 13.2 itself needs "
                       "595.45.04): APIs and PTX newer than CUDA 13.1 are unavailable"))
      << r.out;
  int status = -1;
  json report = known.check(&status, "--gpu sm_80 --driver 575.57.08");
  EXPECT_EQ(status, 1);
  auto too_old = findings_with_code(report, "cuda-driver-too-old");
  ASSERT_EQ(too_old.size(), 1u) << report.dump(1);
  EXPECT_EQ(too_old[0]["message"],
            "CUDA runtime 13.2 (libcudart.so.13, nvidia-cuda-runtime 13.2.86) needs driver >= "
            "595.45.04; this driver is 575.57.08");
}

// The same libcudart.so.13, reached through LD_LIBRARY_PATH in a system-toolkit layout whose real
// file name carries the release: renamed to 13.5.37 it is unknown; to 13.2.86, a verdict.
TEST_F(BeyondTable, RuntimeReleaseFromItsRealFileName) {
  std::string lib = tmp_ / "build/user/libuse.so";
  build_shared(lib, "int cudaGetDeviceCount(int*); int use(void) { int n; return cudaGetDeviceCount(&n); }",
               "-Wl,--no-as-needed " + quote(kCudart13), tmp_);
  Venv venv(tmp_, "v");
  venv.install({wheel("sysuser", "1.0", {{"sysuser/libuse.so", lib}})});
  for (const char* release : {"13.5.37", "13.2.86"}) {
    std::string dir = tmp_ / (std::string("toolkit-") + release);
    fs::create_directories(dir);
    fs::copy_file(kCudart13, dir + "/libcudart.so." + release);
    fs::create_symlink(std::string("libcudart.so.") + release, dir + "/libcudart.so.13");
    CommandResult r = venv.envdoctor_run("check", "--gpu sm_80 --driver 575.57.08 --ld-library-path " + quote(dir));
    if (std::string(release) == "13.5.37") {
      EXPECT_EQ(r.status, 0) << r.out << r.err;
      EXPECT_TRUE(has_line(r.out,
                           "note: libcudart.so.13 13.5 (file libcudart.so.13.5.37) is newer than this "
                           "envdoctor's CUDA table (13.4): driver requirement unknown; fix: update envdoctor"))
          << r.out;
    } else {
      EXPECT_EQ(r.status, 1) << r.out << r.err;
      EXPECT_TRUE(has_line(r.out,
                           "CUDA runtime 13.2 (libcudart.so.13, file libcudart.so.13.2.86) needs driver >= "
                           "595.45.04; this driver is 575.57.08"))
          << r.out;
    }
  }
}

// A driver of a newer branch than every row: what it runs is not guessed; the runtimes the
// tables know are still checked against it (all pass).
TEST_F(BeyondTable, DriverNewerThanEveryRow) {
  Venv venv(tmp_, "drv");
  venv.install({runtime_wheel("13.0.96"), user_wheel()});
  CommandResult r = venv.envdoctor_run("check", "--gpu sm_80 --driver 620.10");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has_line(r.out,
                       "note: driver 620.10 is newer than this envdoctor's CUDA table (driver 615, CUDA 13.4): "
                       "the CUDA releases it runs beyond 13.4 are unknown; fix: update envdoctor"))
      << r.out;
  CommandResult table = venv.envdoctor_run("cuda", "--driver 620.10");
  EXPECT_TRUE(has_line(table.out,
                       "driver: 620.10 (--driver), newer than this envdoctor's CUDA table: which CUDA it "
                       "runs is unknown (update envdoctor)"))
      << table.out;
  EXPECT_TRUE(has_line(table.out, "needs driver >= 580.65.06  ok")) << table.out;
  json j = json::parse(venv.envdoctor_run("cuda", "--json --driver 620.10").out);
  EXPECT_EQ(j["driver"]["cuda"], nullptr);
}

// A GPU newer than the architecture table gets no verdict; CUDA 13 on a GPU older than Turing is
// an error at its runtime.
TEST_F(BeyondTable, GpusOutsideTheTable) {
  Venv venv(tmp_, "gpu");
  venv.install({runtime_wheel("13.0.96"), user_wheel(),
                wheel("kern-sm80", "1.0", {{"kern_sm80/libk.so", cuda_fixture("sm80.so")}})});
  CommandResult r = venv.envdoctor_run("check", "--gpu sm_130 --driver 580.65.06");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(only_undefined_symbol_errors(r.out)) << r.out;
  EXPECT_FALSE(has_line(r.out, "gpu-arch-unsupported")) << r.out;
  EXPECT_TRUE(has_line(r.out,
                       "note: GPU sm_130 (compute capability 13.0) is newer than this envdoctor's CUDA table "
                       "(up to sm_121): which code runs on it is unknown; fix: update envdoctor"))
      << r.out;
  json j = json::parse(venv.envdoctor_run("cuda", "--json --gpu sm_130 --driver 580.65.06").out);
  for (const json& p : j["packages"]) {
    if (p["name"] == "kern-sm80") {
      EXPECT_EQ(p["coverage"], json({{"sm_130", "unknown"}})) << j.dump(1);
    }
  }

  int status = -1;
  json report = venv.check(&status, "--gpu sm_70 --driver 580.65.06");
  EXPECT_EQ(status, 1);
  std::vector<json> at_runtime;
  for (const json& f : findings_with_code(report, "gpu-arch-unsupported"))
    if (f.value("library", "") == "libcudart.so.13") at_runtime.push_back(f);
  ASSERT_EQ(at_runtime.size(), 1u) << report.dump(1);
  EXPECT_EQ(at_runtime[0]["file"], venv.site() + "/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(at_runtime[0]["arch"], "sm_70");
  EXPECT_EQ(
      at_runtime[0]["message"],
      "CUDA 13 does not support sm_70 (compute capability 7.0): libcudart.so.13 needs compute capability 7.5 or newer");
  EXPECT_EQ(at_runtime[0]["hint"],
            "CUDA 13 dropped GPUs older than compute capability 7.5: install builds for a CUDA "
            "major that supports 7.0 of user13");
  report = venv.check(&status, "--gpu sm_75 --driver 580.65.06");
  for (const json& f : findings_with_code(report, "gpu-arch-unsupported"))
    EXPECT_NE(f.value("library", ""), "libcudart.so.13");
}

// PTX patched to ISA 9.4 (CUDA 13.4, r615) in a wheel: a 590 driver cannot JIT it. Patched to
// 9.5 (no driver branch known) on a 620 driver: JIT is the only way, whether it works is unknown.
TEST_F(BeyondTable, PatchedPtxIsaAgainstTheDriverBranch) {
  auto with_isa = [&](uint16_t minor) {
    std::vector<uint8_t> bytes = read_bytes(cuda_fixture("sm80_ptx.so"));
    for_each_fatbin_entry(bytes, ptx_isa_patch(9, minor));
    fs::create_directories(tmp_ / "build");
    std::string out = tmp_ / ("build/ptx9" + std::to_string(minor) + ".so");
    write_bytes(out, bytes);
    return out;
  };
  Venv venv(tmp_, "ptx");
  venv.install({wheel("kern-ptx94", "1.0", {{"kern_ptx94/libk.so", with_isa(4)}}),
                wheel("kern-ptx95", "1.0", {{"kern_ptx95/libk.so", with_isa(5)}})});
  int status = -1;
  json report = venv.check(&status, "--gpu sm_90 --driver 590.44.01");
  EXPECT_EQ(status, 1);
  bool found = false;
  for (const json& f : findings_with_code(report, "gpu-arch-unsupported"))
    if (f["package"] == "kern-ptx94") {
      found = true;
      EXPECT_EQ(f["message"],
                "no kernel image for sm_90 in " + venv.site() +
                    "/kern_ptx94/libk.so: SASS for sm_80; "
                    "PTX compute_80; the driver 590.44.01 cannot JIT compute_80 (PTX ISA 9.4, needs 615 or newer)");
    }
  EXPECT_TRUE(found) << report.dump(1);

  CommandResult r = venv.envdoctor_run("check", "--gpu sm_90 --driver 620.10");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(only_undefined_symbol_errors(r.out)) << r.out;
  EXPECT_TRUE(has_line(
      r.out, "note: PTX ISA 9.5 of " + venv.site() +
                 "/kern_ptx95/libk.so is newer than this "
                 "envdoctor's CUDA table (9.4): whether driver 620.10 can JIT it is unknown; fix: update envdoctor"))
      << r.out;
}

}  // namespace
}  // namespace envdoctor::test
