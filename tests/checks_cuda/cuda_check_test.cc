// `envdoctor check` and `envdoctor cuda` on CUDA situations built for real: fatbinaries from nvcc
// (the committed tests/fixtures/data/cuda fixtures and one compile at test time), the toolkit's own
// libcudart.so.13, a gcc-built libcudart.so.12 stand-in, all inside wheels installed with real
// pip into real venvs, laid out where NVIDIA's wheels put them (nvidia/cu13/lib,
// nvidia/cuda_runtime/lib). The GPUs and the driver are given on the command line, so the
// results do not depend on this machine's hardware.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <tuple>

#include "cuda/driver.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/loader_referee.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// The CUDA findings as (code, package, arch) for comparing whole sets at once.
using Key = std::tuple<std::string, std::string, std::string>;
std::set<Key> cuda_keys(const json& report) {
  std::set<Key> out;
  for (const json& f : report["findings"]) {
    std::string code = f["code"];
    if (code != "gpu-arch-unsupported" && code != "ptx-jit-only" && code != "cuda-driver-too-old" &&
        code != "cuda-major-mix")
      continue;
    out.emplace(code, f["package"].is_null() ? "" : f["package"].get<std::string>(), f.value("arch", ""));
  }
  return out;
}

class CudaCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || !have_tool("python3")) GTEST_SKIP() << "needs gcc and python3";
    if (!python3_facts().pip) GTEST_SKIP() << "needs pip";
    fs::create_directories(tmp_ / "wheels");
  }

  std::string wheel(const std::string& name, const std::string& version, const json& paths,
                    const std::vector<std::string>& requires_dist = {}) {
    json spec = {{"name", name}, {"version", version}, {"tag", kTag}, {"purelib", false}, {"paths", paths}};
    if (!requires_dist.empty()) spec["requires"] = requires_dist;
    return make_wheel(tmp_ / "wheels", spec);
  }
  // NVIDIA's CUDA 13 runtime wheel: the toolkit's real libcudart.so.13 where the wheel puts it.
  std::string cudart13_wheel() {
    return wheel("nvidia-cuda-runtime", "13.0.96", {{"nvidia/cu13/lib/libcudart.so.13", kCudart13}});
  }
  // nvidia-cuda-runtime-cu12's layout, with a gcc-built library of the same SONAME.
  std::string cudart12_wheel() {
    std::string lib = tmp_ / "build/cudart12/libcudart.so.12";
    build_shared(lib, "int cudart12_fn(void) { return 12; }", "-Wl,-soname,libcudart.so.12", tmp_);
    return wheel("nvidia-cuda-runtime-cu12", "12.4.127", {{"nvidia/cuda_runtime/lib/libcudart.so.12", lib}});
  }

  TempDir tmp_;
};

// The committed nvcc fixtures (tests/fixtures/data/cuda/build.sh): SASS sm_80 alone, sm_80 + PTX
// compute_80, and arch-specific sm_90a + compute_90a, each in its own wheel, checked for three
// GPUs at once (and the three spellings of --gpu).
TEST_F(CudaCheckTest, KernelImagesForEachGpu) {
  std::string sm80 = wheel("kern-sm80", "1.0", {{"kern_sm80/libk.so", cuda_fixture("sm80.so")}});
  std::string ptx = wheel("kern-ptx", "1.0", {{"kern_ptx/libk.so", cuda_fixture("sm80_ptx.so")}});
  std::string sm90a = wheel("kern-sm90a", "1.0", {{"kern_sm90a/libk.so", cuda_fixture("sm90a.so")}});
  Venv venv(tmp_, "archs");
  venv.install({sm80, ptx, sm90a});

  int status = -1;
  json report = venv.check(&status, "--gpu sm_86 --gpu 9.0 --gpu 100 --driver 580.65.06");
  EXPECT_EQ(status, 1);
  // sm_80 SASS runs on 8.6 (same major, newer minor); nothing runs sm_90a but 9.0.
  EXPECT_EQ(cuda_keys(report), (std::set<Key>{{"gpu-arch-unsupported", "kern-sm90a", "sm_86"},
                                              {"gpu-arch-unsupported", "kern-sm80", "sm_90"},
                                              {"ptx-jit-only", "kern-ptx", "sm_90"},
                                              {"gpu-arch-unsupported", "kern-sm80", "sm_100"},
                                              {"gpu-arch-unsupported", "kern-sm90a", "sm_100"},
                                              {"ptx-jit-only", "kern-ptx", "sm_100"}}))
      << report.dump(1);

  report = venv.check(&status, "--gpu sm_90 --driver 580.65.06");
  EXPECT_EQ(status, 1);
  auto unsupported = findings_with_code(report, "gpu-arch-unsupported");
  ASSERT_EQ(unsupported.size(), 1u) << report.dump(1);
  EXPECT_EQ(unsupported[0]["severity"], "error");
  EXPECT_EQ(unsupported[0]["file"], venv.site() + "/kern_sm80/libk.so");
  EXPECT_EQ(unsupported[0]["message"],
            "no kernel image for sm_90 in " + venv.site() + "/kern_sm80/libk.so: SASS for sm_80; PTX none");
  EXPECT_EQ(unsupported[0]["hint"],
            "kern-sm80 1.0 carries no code that runs on sm_90 (compute capability 9.0): install a build of kern-sm80 "
            "for sm_90, or a wheel built with PTX (compute_90 or lower) for the driver to JIT; from source: "
            "TORCH_CUDA_ARCH_LIST=\"9.0+PTX\"");
  auto jit = findings_with_code(report, "ptx-jit-only");
  ASSERT_EQ(jit.size(), 1u);
  EXPECT_EQ(jit[0]["severity"], "warning");
  EXPECT_EQ(jit[0]["message"],
            "no SASS for sm_90 in " + venv.site() +
                "/kern_ptx/libk.so: SASS for sm_80; PTX compute_80; the driver JIT-compiles the PTX on first use");

  report = venv.check(&status, "--gpu sm_100 --driver 580.65.06");
  bool found = false;
  for (const json& f : findings_with_code(report, "gpu-arch-unsupported"))
    if (f["package"] == "kern-sm90a") {
      found = true;
      EXPECT_EQ(f["message"], "no kernel image for sm_100 in " + venv.site() +
                                  "/kern_sm90a/libk.so: SASS for sm_90a; PTX compute_90a (sm_90a runs only on 9.0: "
                                  "arch-specific code)");
    }
  EXPECT_TRUE(found) << report.dump(1);

  // Without --gpu on a machine without a GPU: skipped, and the report says so. The fixtures are
  // built with -cudart none, so nothing defines __cudaLaunchKernel and the rest: they fail to
  // load (as dlopen says), and those errors alone make the exit status 1.
  if (cuda::detect_driver().gpus.empty()) {
    CommandResult text = venv.envdoctor_run("check", "--driver 580.65.06");
    EXPECT_EQ(text.status, 1) << text.out << text.err;
    EXPECT_NE(text.out.find("note: no GPU found; pass --gpu sm_XX to check GPU code"), std::string::npos) << text.out;
    report = venv.check(&status, "--driver 580.65.06");
    std::string sm80_lib = venv.site() + "/kern_sm80/libk.so", first;
    for (const json& f : report["findings"]) {
      EXPECT_EQ(f["code"], "undefined-symbol") << f.dump(1);
      if (first.empty() && f["file"] == sm80_lib) first = f["message"];
    }
    EXPECT_EQ(first, referee_dlopen(tmp_, sm80_lib));
  }
  // A spelling that names no GPU is a usage error.
  EXPECT_EQ(venv.envdoctor_run("check", "--gpu sm_8x").status, 2);
}

// One nvcc compile: a library with SASS sm_86 + PTX compute_86 that links the CUDA 13 runtime of
// NVIDIA's wheel through its RPATH. The driver decides whether that runtime can run; `envdoctor
// cuda` says who uses it and what the package covers.
TEST_F(CudaCheckTest, RuntimeAgainstTheDriver) {
  if (!fs::exists(kNvcc) || !fs::exists(kCudart13)) GTEST_SKIP() << "needs nvcc and " << kCudart13;
  std::string cu = tmp_.write("build/kern.cu",
                              "__global__ void add(float* a) { a[threadIdx.x] += 1.0f; }\n"
                              "extern \"C\" void launch(float* a) { add<<<1, 32>>>(a); }\n");
  std::string lib = tmp_ / "build/libkern.so";
  CommandResult nvcc =
      run(quote(kNvcc) + " -shared -Xcompiler -fPIC -cudart shared -gencode " +
          "'arch=compute_86,code=[sm_86,compute_86]' -Xlinker -rpath,'$ORIGIN/../nvidia/cu13/lib' -o " + quote(lib) +
          " " + quote(cu));
  ASSERT_EQ(nvcc.status, 0) << nvcc.err;
  Venv venv(tmp_, "runtime");
  venv.install({cudart13_wheel(), wheel("kernpkg", "0.3", {{"kernpkg/libkern.so", lib}})});

  int status = -1;
  json old_driver = venv.check(&status, "--gpu sm_89 --driver 550.54.14");
  EXPECT_EQ(status, 1);
  auto too_old = findings_with_code(old_driver, "cuda-driver-too-old");
  ASSERT_EQ(too_old.size(), 1u) << old_driver.dump(1);
  EXPECT_EQ(too_old[0]["file"], venv.site() + "/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(too_old[0]["package"], "nvidia-cuda-runtime");
  EXPECT_EQ(too_old[0]["library"], "libcudart.so.13");
  EXPECT_EQ(
      too_old[0]["message"],
      "CUDA runtime 13.0 (libcudart.so.13, nvidia-cuda-runtime 13.0.96) needs driver >= 580.65.06; this driver is "
      "550.54.14");
  EXPECT_EQ(too_old[0]["hint"],
            "upgrade the NVIDIA driver to 580.65.06 or newer (any driver >= 580 runs CUDA 13.x through minor-version "
            "compatibility), or install the builds for CUDA 12.4 or older of what uses it: kernpkg");
  EXPECT_EQ(cuda_keys(old_driver), (std::set<Key>{{"cuda-driver-too-old", "nvidia-cuda-runtime", ""}}));

  // nvcc 13 writes PTX ISA 9.0, which a CUDA 12.4 driver cannot JIT for a 9.0 GPU.
  json hopper = venv.check(&status, "--gpu sm_90 --driver 550.54.14");
  auto no_jit = findings_with_code(hopper, "gpu-arch-unsupported");
  ASSERT_EQ(no_jit.size(), 1u) << hopper.dump(1);
  EXPECT_EQ(no_jit[0]["message"],
            "no kernel image for sm_90 in " + venv.site() +
                "/kernpkg/libkern.so: SASS for sm_86; PTX compute_86; the driver 550.54.14 cannot "
                "JIT compute_86 (PTX ISA 9.0, needs 580 or newer)");
  EXPECT_EQ(no_jit[0]["hint"],
            "kernpkg 0.3 has PTX for sm_90 that this driver is too old to compile: upgrade the NVIDIA driver to "
            "580 or newer, or install a build of kernpkg with SASS for sm_90 (from source: "
            "TORCH_CUDA_ARCH_LIST=\"9.0\")");

  json new_driver = venv.check(&status, "--gpu sm_80 --driver 580.65.06");
  // The SASS is for 8.6: an A100 (8.0) cannot run it, nor compile compute_86 PTX.
  EXPECT_EQ(cuda_keys(new_driver), (std::set<Key>{{"gpu-arch-unsupported", "kernpkg", "sm_80"}})) << new_driver.dump(1);

  // cuda-compat's libcuda on LD_LIBRARY_PATH lifts the runtimes' driver to its own release.
  std::string compat = tmp_ / "compat/libcuda.so.580.65.06";
  build_shared(compat, "int cuInit(unsigned f) { return 0; }", "-Wl,-soname,libcuda.so.1", tmp_);
  fs::create_symlink("libcuda.so.580.65.06", tmp_ / "compat/libcuda.so.1");
  CommandResult text =
      venv.envdoctor_run("check", "--gpu sm_89 --driver 550.54.14 --ld-library-path " + quote(tmp_ / "compat"));
  EXPECT_EQ(text.status, 0) << text.out << text.err;
  EXPECT_EQ(text.out.find("cuda-driver-too-old"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("note: forward-compatibility libcuda " + fs::canonical(compat).string() +
                          " (LD_LIBRARY_PATH) raises the driver the CUDA runtimes talk to from 550.54.14 to 580.65.06"),
            std::string::npos)
      << text.out;

  CommandResult cuda = venv.envdoctor_run("cuda", "--json --gpu sm_90 --driver 550.54.14");
  ASSERT_EQ(cuda.status, 0) << cuda.err;
  expect_schema_valid("cuda", cuda.out);
  json j = json::parse(cuda.out);
  EXPECT_EQ(j["driver"]["version"], "550.54.14");
  EXPECT_EQ(j["driver"]["source"], "--driver");
  EXPECT_EQ(j["driver"]["cuda"], "12.4");
  EXPECT_EQ(j["gpus"], json::parse(R"([{"name": "sm_90", "arch": "sm_90", "compute_capability": "9.0"}])"));
  ASSERT_EQ(j["runtimes"].size(), 1u) << j.dump(1);
  const json& rt = j["runtimes"][0];
  EXPECT_EQ(rt["path"], venv.site() + "/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(rt["soname"], "libcudart.so.13");
  EXPECT_EQ(rt["version"], "13.0");
  EXPECT_EQ(rt["version_source"], "nvidia-cuda-runtime 13.0.96");
  EXPECT_EQ(rt["package"], "nvidia-cuda-runtime");
  EXPECT_EQ(rt["driver_required"], "580.65.06");
  EXPECT_EQ(rt["driver_ok"], false);
  EXPECT_EQ(rt["used_by"], json({"kernpkg"}));
  json kernpkg;
  for (const json& p : j["packages"])
    if (p["name"] == "kernpkg") kernpkg = p;
  EXPECT_EQ(kernpkg, json::parse(R"({"name": "kernpkg", "file": null, "version": "0.3", "cuda_majors": [13],
      "uses": [{"library": "libcudart.so.13", "from": "nvidia-cuda-runtime"}], "files_with_gpu_code": 1,
      "sass": ["sm_86"], "ptx": ["compute_86"], "coverage": {"sm_90": "unsupported"}})"))
      << j.dump(1);
  // With a CUDA 13 driver the same PTX JIT-compiles.
  cuda = venv.envdoctor_run("cuda", "--json --gpu sm_90 --driver 580.65.06");
  expect_schema_valid("cuda", cuda.out);
  j = json::parse(cuda.out);
  EXPECT_EQ(j["packages"][0]["coverage"], json({{"sm_90", "ptx-jit"}})) << j.dump(1);

  CommandResult table = venv.envdoctor_run("cuda", "--gpu sm_90 --driver 550.54.14");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("libcudart.so.13  13.0  nvidia-cuda-runtime 13.0.96  needs driver >= 580.65.06  TOO NEW"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("used by: kernpkg"), std::string::npos) << table.out;
}

// CUDA 12 and 13 runtimes side by side (nvidia-cuda-runtime-cu12 next to the CUDA 13 wheel): a
// warning for the environment. Then one extension that loads both, and a cu12-built extension
// imported after a cu13-built package it requires (flash-attn on a CUDA 13 torch): errors,
// each at the place where the two majors meet.
TEST_F(CudaCheckTest, MajorsMixedInEnvironmentAndInOneProcess) {
  if (!fs::exists(kCudart13)) GTEST_SKIP() << "needs " << kCudart13;
  Venv venv(tmp_, "mix");
  venv.install({cudart13_wheel(), cudart12_wheel()});
  std::string rt12 = venv.site() + "/nvidia/cuda_runtime/lib/libcudart.so.12";
  std::string rt13 = venv.site() + "/nvidia/cu13/lib/libcudart.so.13";

  int status = -1;
  json report = venv.check(&status, "--driver 580.65.06");
  EXPECT_EQ(status, 0) << report.dump(1);
  auto mix = findings_with_code(report, "cuda-major-mix");
  ASSERT_EQ(mix.size(), 1u) << report.dump(1);
  EXPECT_EQ(mix[0]["severity"], "warning");
  EXPECT_EQ(mix[0]["file"], rt12);
  EXPECT_EQ(mix[0]["packages"], json({"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu12"}));
  EXPECT_EQ(mix[0]["message"],
            "CUDA 12 and 13 libraries in one environment: CUDA 12: libcudart.so.12 (nvidia-cuda-runtime-cu12); "
            "CUDA 13: libcudart.so.13 (nvidia-cuda-runtime)");
  EXPECT_EQ(mix[0]["hint"],
            "nothing loads the CUDA 12 libraries: pip uninstall nvidia-cuda-runtime-cu12; nothing loads the CUDA 13 "
            "libraries: pip uninstall nvidia-cuda-runtime; a process that loads two majors gets two CUDA runtimes, so "
            "keep one");
  // The 12.4 runtime is exactly what 550.54.14 supports; the 13.0 one is not.
  report = venv.check(&status, "--driver 550.54.14");
  EXPECT_EQ(cuda_keys(report), (std::set<Key>{{"cuda-major-mix", "nvidia-cuda-runtime-cu12", ""},
                                              {"cuda-driver-too-old", "nvidia-cuda-runtime", ""}}))
      << report.dump(1);

  // mixext: one extension module that NEEDs both runtimes.
  std::string both = tmp_ / "build/mixext/_mix.so";
  build_shared(both,
               "int cudart12_fn(void); int cudaGetDeviceCount(int*);\n"
               "void* PyInit__mix(void) { int n; cudaGetDeviceCount(&n); return (void*)(long)cudart12_fn(); }",
               "-Wl,--no-as-needed " + quote(rt12) + " " + quote(rt13) +
                   " -Wl,-rpath,'$ORIGIN/../nvidia/cuda_runtime/lib:$ORIGIN/../nvidia/cu13/lib'",
               tmp_);
  // torchlike (CUDA 13) and extlike (CUDA 12), which requires torchlike.
  std::string torch_ext = tmp_ / "build/torchlike/_C.so";
  build_shared(
      torch_ext,
      "int cudaGetDeviceCount(int*); void* PyInit__C(void) { int n; return (void*)(long)cudaGetDeviceCount(&n); }",
      "-Wl,--no-as-needed " + quote(rt13) + " -Wl,-rpath,'$ORIGIN/../nvidia/cu13/lib'", tmp_);
  std::string ext12 = tmp_ / "build/extlike/_ext.so";
  build_shared(ext12, "int cudart12_fn(void); void* PyInit__ext(void) { return (void*)(long)cudart12_fn(); }",
               "-Wl,--no-as-needed " + quote(rt12) + " -Wl,-rpath,'$ORIGIN/../nvidia/cuda_runtime/lib'", tmp_);
  venv.install({wheel("mixext", "1.0", {{"mixext/_mix.so", both}}),
                wheel("torchlike", "2.9", {{"torchlike/_C.so", torch_ext}}),
                wheel("extlike", "0.1", {{"extlike/_ext.so", ext12}}, {"torchlike"})});

  report = venv.check(&status, "--driver 580.65.06");
  EXPECT_EQ(status, 1) << report.dump(1);
  EXPECT_EQ(cuda_keys(report), (std::set<Key>{{"cuda-major-mix", "nvidia-cuda-runtime-cu12", ""},
                                              {"cuda-major-mix", "mixext", ""},
                                              {"cuda-major-mix", "extlike", ""}}))
      << report.dump(1);
  for (const json& f : findings_with_code(report, "cuda-major-mix")) {
    if (f["package"] == "mixext") {
      EXPECT_EQ(f["severity"], "error");
      EXPECT_EQ(f["file"], venv.site() + "/mixext/_mix.so");
      EXPECT_EQ(f["message"],
                "CUDA 12 and 13 libraries in one process: _mix.so loads libcudart.so.12 (nvidia-cuda-runtime-cu12) and "
                "libcudart.so.13 (nvidia-cuda-runtime)");
    }
    if (f["package"] == "extlike") {
      EXPECT_EQ(f["severity"], "error");
      EXPECT_EQ(f["message"],
                "CUDA 12 and 13 libraries in one process: _ext.so loads libcudart.so.12 (nvidia-cuda-runtime-cu12) "
                "after torchlike loaded libcudart.so.13 (nvidia-cuda-runtime)");
      EXPECT_EQ(f["hint"],
                "extlike 0.1 is built for CUDA 12 and torchlike for CUDA 13: install the builds of extlike and "
                "torchlike for one CUDA major");
    }
    if (f["severity"] == "warning") {
      EXPECT_EQ(f["hint"],
                "CUDA 12 is used by extlike, mixext; CUDA 13 is used by mixext, torchlike; a process that loads two "
                "majors gets two CUDA runtimes, so keep one");
    }
  }
  EXPECT_TRUE(findings_with_code(report, "missing-library").empty()) << report.dump(1);
}

// Regression (issue 13): `cuda` judged NVIDIA's own libraries by their fatbinary headers alone,
// where `check` knows that some keep kernels the headers do not show (cuFFT's .ldata,
// docs/cuda.md), so the two disagreed. The library here is the sm_80 fixture's .nv_fatbin linked
// under a SONAME of data/sonames.json (libnpps.so.13): on sm_90 both say it runs; on sm_75, older
// than all of its code, both say it does not.
TEST_F(CudaCheckTest, CudaAndCheckJudgeNvidiasOwnLibrariesAlike) {
  if (!have_tool("objcopy")) GTEST_SKIP() << "needs objcopy";
  std::string fatbin = tmp_ / "build/npps/fatbin.bin";
  std::string lib = tmp_ / "build/npps/libnpps.so.13";
  fs::create_directories(tmp_ / "build/npps");
  CommandResult r =
      run("objcopy -O binary --only-section=.nv_fatbin " + quote(cuda_fixture("sm80.so")) + " " + quote(fatbin) +
          " && cd " + quote(tmp_ / "build/npps") +
          " && objcopy -I binary -O elf64-x86-64 --rename-section .data=.nv_fatbin,alloc,load,readonly,data,contents"
          " fatbin.bin fatbin.o && gcc -shared -nostdlib -Wl,-soname,libnpps.so.13 fatbin.o -o " +
          quote(lib));
  ASSERT_EQ(r.status, 0) << r.err;
  Venv venv(tmp_, "toolkit");
  venv.install({wheel("nvidia-npp", "13.0.0.50", {{"nvidia/cu13/lib/libnpps.so.13", lib}})});

  auto coverage = [&](const std::string& gpu) {
    CommandResult c = venv.envdoctor_run("cuda", "--json --driver 580.65.06 --gpu " + gpu);
    EXPECT_EQ(c.status, 0) << c.err;
    json report = json::parse(c.out);
    for (const json& p : report["packages"])
      if (p["name"] == "nvidia-npp") return p["coverage"][gpu].get<std::string>();
    return std::string("(no row)");
  };
  int status = -1;
  json report = venv.check(&status, "--gpu sm_90 --driver 580.65.06");
  EXPECT_TRUE(findings_with_code(report, "gpu-arch-unsupported").empty()) << report.dump(1);
  EXPECT_EQ(coverage("sm_90"), "sass");

  report = venv.check(&status, "--gpu sm_75 --driver 580.65.06");
  EXPECT_EQ(findings_with_code(report, "gpu-arch-unsupported").size(), 1u) << report.dump(1);
  EXPECT_EQ(coverage("sm_75"), "unsupported");
}

// cuda-major-mix per pair of import contexts: cu12ext vendors a libcudart.so.12 and cu13ext a
// libcudart.so.13 (gcc-built libraries with those SONAMEs; no GPU needed), each found by its
// extension module's RUNPATH. Each imports alone on one major; `import cu12ext, cu13ext` maps
// both runtimes into one process (the referee: that process's own /proc/self/maps). The pair is
// the finding, naming both packages; the environment-wide warning would only repeat it.
class CudaPairTest : public VenvTest {
 protected:
  std::string cuda_package(const std::string& name, int major) {
    std::string soname = "libcudart.so." + std::to_string(major);
    std::string fn = "cudart" + std::to_string(major) + "_fn";
    std::string lib = tmp_ / ("build/" + name + "/" + soname);
    build_shared(lib, "int " + fn + "(void) { return " + std::to_string(major) + "; }", "-Wl,-soname," + soname, tmp_);
    std::string ext = tmp_ / ("build/" + name + "/_" + name + suffix_);
    build_ext(ext, "_" + name, "int " + fn + "(void);", fn + "()",
              quote(lib) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'");
    return platlib_wheel(name, "1.0", {{name + "/lib/" + soname, lib}, {name + "/_" + name + suffix_, ext}},
                         {{name + "/__init__.py", "from . import _" + name + "\n"}});
  }
};

TEST_F(CudaPairTest, TwoPackagesOnTwoMajorsAreAPair) {
  Venv venv(tmp_, "pair");
  venv.install({cuda_package("cu12ext", 12), cuda_package("cu13ext", 13)});
  std::string rt12 = venv.site() + "/cu12ext/lib/libcudart.so.12";
  std::string rt13 = venv.site() + "/cu13ext/lib/libcudart.so.13";
  ASSERT_EQ(venv.import("cu12ext"), "");
  ASSERT_EQ(venv.import("cu13ext"), "");
  CommandResult maps = run("cd / && " + quote(venv.python()) + " -c " +
                           quote("import cu12ext, cu13ext; print(open('/proc/self/maps').read())"));
  ASSERT_EQ(maps.status, 0) << maps.err;
  ASSERT_NE(maps.out.find(rt12), std::string::npos) << maps.out;
  ASSERT_NE(maps.out.find(rt13), std::string::npos) << maps.out;

  int status = -1;
  json report = venv.check(&status, "--driver 580.65.06");
  EXPECT_EQ(status, 0) << report.dump(1);  // a warning: no one load graph holds both
  auto mix = findings(report, "cuda-major-mix");
  ASSERT_EQ(mix.size(), 1u) << report.dump(1);
  EXPECT_EQ(mix[0]["severity"], "warning");
  EXPECT_EQ(mix[0]["package"], "cu12ext");
  EXPECT_EQ(mix[0]["packages"], json({"cu12ext", "cu13ext"}));
  EXPECT_EQ(mix[0]["file"], venv.site() + "/cu12ext/_cu12ext" + suffix_);
  EXPECT_EQ(mix[0]["message"],
            "CUDA 12 and 13 libraries in one process: `import cu12ext, cu13ext`: cu12ext's _cu12ext" + suffix_ +
                " loads libcudart.so.12 (cu12ext), cu13ext's _cu13ext" + suffix_ + " loads libcudart.so.13 (cu13ext)");
  EXPECT_EQ(mix[0]["hint"],
            "cu12ext 1.0 is built for CUDA 12 and cu13ext 1.0 for CUDA 13: each imports alone, but a process that "
            "imports both (in either order) holds two CUDA runtimes; install the builds of cu12ext and cu13ext for one "
            "CUDA major, or import them in separate processes");

  // Alone, one major: no pair.
  venv.uninstall("cu13ext");
  report = venv.check(&status, "--driver 580.65.06");
  EXPECT_TRUE(findings(report, "cuda-major-mix").empty()) << report.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
