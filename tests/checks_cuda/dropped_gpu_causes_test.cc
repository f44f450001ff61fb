// One cause for a GPU that a CUDA major dropped (issue 49, item 1): CUDA 13 on a Volta GPU
// (--gpu sm_70) is one error, on the CUDA 13 runtime; a build for every GPU CUDA 13 supports
// (its lowest code sm_75, as torch's CUDA 13 wheels) has no sm_70 code because of it, so its
// gpu-arch-unsupported names the runtime's finding as its cause, takes its fix, and is not
// counted. A build that leaves out GPUs CUDA 13 does support (SASS for sm_80 only) lacks sm_70
// for a reason of its own and stays a cause. The runtime is the toolkit's real libcudart.so.13;
// the kernels are the committed nvcc fixture, its cubins' architecture patched.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/cuda_fixtures.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

TEST(DroppedGpuCauses, BuildsForEveryGpuOfTheReleaseFollowFromTheRuntime) {
  if (!have_tool("gcc") || !have_tool("python3") || !python3_facts().pip) GTEST_SKIP() << "needs gcc, python3 and pip";
  if (!fs::exists(kCudart13)) GTEST_SKIP() << "needs " << kCudart13;
  TempDir tmp;
  fs::create_directories(tmp / "wheels");
  fs::create_directories(tmp / "build");
  auto wheel = [&](const std::string& name, const json& paths) {
    return make_wheel(tmp / "wheels",
                      {{"name", name}, {"version", "1.0"}, {"tag", kTag}, {"purelib", false}, {"paths", paths}});
  };
  std::vector<uint8_t> sm75 = read_bytes(cuda_fixture("sm80.so"));
  for_each_fatbin_entry(sm75, [](uint8_t* header) { set_entry_arch(header, 75); });
  write_bytes(tmp / "build/sm75.so", sm75);
  Venv venv(tmp, "volta");
  venv.install({wheel("nvidia-cuda-runtime", {{"nvidia/cu13/lib/libcudart.so.13", kCudart13}}),
                wheel("kern-all", {{"kern_all/libk.so", std::string(tmp / "build/sm75.so")}}),
                wheel("kern-sm80", {{"kern_sm80/libk.so", cuda_fixture("sm80.so")}})});
  int status = -1;
  json report = venv.check(&status, "--gpu sm_70 --driver 580.65.06");
  EXPECT_EQ(status, 1);
  const std::string runtime = venv.site() + "/nvidia/cu13/lib/libcudart.so.13";
  std::map<std::string, json> by_file;
  for (const json& f : findings_with_code(report, "gpu-arch-unsupported")) by_file[f["file"]] = f;
  ASSERT_EQ(by_file.size(), 3u) << report.dump(1);
  const json& root = by_file[runtime];
  EXPECT_FALSE(root.contains("caused_by")) << root.dump(1);
  const json& all = by_file[venv.site() + "/kern_all/libk.so"];
  EXPECT_EQ(all["caused_by"], json({{"code", "gpu-arch-unsupported"},
                                    {"file", runtime},
                                    {"library", "libcudart.so.13"},
                                    {"package", "nvidia-cuda-runtime"}}))
      << all.dump(1);
  EXPECT_EQ(all.value("fix_command", ""), root.value("fix_command", ""));
  EXPECT_EQ(all["hint"], "CUDA 13 builds no code for sm_70; " + root["hint"].get<std::string>());
  const json& own = by_file[venv.site() + "/kern_sm80/libk.so"];
  EXPECT_FALSE(own.contains("caused_by")) << own.dump(1);
  // The fixtures' undefined __cudaLaunchKernel (built with -cudart none) are causes of their own.
  size_t errors = report["summary"]["errors"], causes = report["summary"]["causes"];
  EXPECT_EQ(errors - causes, 1u) << report["summary"].dump();
}

}  // namespace
}  // namespace envdoctor::test
