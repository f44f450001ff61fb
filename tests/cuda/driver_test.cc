// Driver and GPU detection: the parsers on the exact texts each source prints, and detection on
// a machine (or a made-up root) without a driver.
#include <gtest/gtest.h>

#include <filesystem>

#include "cuda/driver.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/fixture.h"

namespace envdoctor::cuda {
namespace {

using test::text;

TEST(DriverParse, ProcVersionProprietaryModule) {
  EXPECT_EQ(text(parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"
                "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")),
            "535.183.01");
}

TEST(DriverParse, ProcVersionOpenModule) {
  EXPECT_EQ(text(parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
                "(dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"
                "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")),
            "580.65.06");
}

TEST(DriverParse, ProcVersionAarch64) {
  EXPECT_EQ(text(parse_proc_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06  Release Build\n")),
            "570.124.06");
}

TEST(DriverParse, ProcVersionGarbage) {
  EXPECT_EQ(text(parse_proc_driver_version("")), "none");
  EXPECT_EQ(text(parse_proc_driver_version("NVRM version: something else 1.2.3\n")), "none");
  EXPECT_EQ(text(parse_proc_driver_version("Kernel Module  x.y  \n")), "none");
}

TEST(DriverParse, LibcudaFileName) {
  EXPECT_EQ(text(parse_libcuda_file_name("libcuda.so.580.65.06")), "580.65.06");
  EXPECT_EQ(text(parse_libcuda_file_name("/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05")), "535.104.05");
  EXPECT_EQ(text(parse_libcuda_file_name("libcuda.so.1")), "none");
  EXPECT_EQ(text(parse_libcuda_file_name("libcuda.so")), "none");
  EXPECT_EQ(text(parse_libcuda_file_name("libcudart.so.12.8.90")), "none");
}

TEST(DriverParse, NvidiaSmiGpus) {
  std::vector<std::string> problems;
  std::vector<Gpu> gpus = parse_nvidia_smi_gpus(
      "NVIDIA H200, 9.0\nNVIDIA GeForce RTX 5090, 12.0\nNVIDIA A100-SXM4-80GB, 8.0\n\n", &problems);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].sm, 90);
  EXPECT_EQ(gpus[1].name, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(gpus[1].sm, 120);
  EXPECT_EQ(gpus[2].sm, 80);
  EXPECT_TRUE(problems.empty());
}

TEST(DriverParse, NvidiaSmiOldDriverWithoutComputeCap) {
  // Drivers before 510 reject the compute_cap field: "Field "compute_cap" is not a valid field...".
  std::vector<std::string> problems;
  EXPECT_TRUE(parse_nvidia_smi_gpus("Tesla T4, [N/A]\n", &problems).empty());
  EXPECT_EQ(problems, (std::vector<std::string>{"nvidia-smi: cannot read GPU line \"Tesla T4, [N/A]\""}));
}

DriverProbe empty_probe(const test::TempDir& tmp) {
  DriverProbe p;
  p.proc_version = tmp / "proc-version";
  p.libcuda_dirs = {tmp.path().string()};
  p.nvml_library = "";
  p.nvidia_smi = tmp / "no-nvidia-smi";
  return p;
}

TEST(DriverDetect, NothingInstalledIsNone) {
  test::TempDir tmp;
  DriverInfo info = detect_driver(empty_probe(tmp));
  EXPECT_FALSE(info.version);
  EXPECT_TRUE(info.gpus.empty());
  EXPECT_EQ(info.gpus_source, "");
  EXPECT_TRUE(info.problems.empty());
}

TEST(DriverDetect, ThisMachine) {
  // Whatever this machine has, detection finishes and agrees with itself.
  DriverInfo info = detect_driver();
  if (!std::filesystem::exists("/proc/driver/nvidia/version")) {
    EXPECT_NE(info.version_source, "/proc/driver/nvidia/version");
  }
  for (const Gpu& g : info.gpus) EXPECT_GE(g.sm, 30);
}

TEST(DriverDetect, LibcudaRealName) {
  test::TempDir tmp;
  tmp.write("libcuda.so.575.57.08", "");
  std::filesystem::create_symlink("libcuda.so.575.57.08", tmp / "libcuda.so.1");
  DriverInfo info = detect_driver(empty_probe(tmp));
  EXPECT_EQ(text(info.version), "575.57.08");
  EXPECT_EQ(info.version_source, std::filesystem::canonical(tmp / "libcuda.so.575.57.08").string());
}

TEST(DriverDetect, KernelModuleAndLibcudaDisagree) {
  test::TempDir tmp;
  tmp.write("proc-version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
  tmp.write("libcuda.so.575.57.08", "");
  std::filesystem::create_symlink("libcuda.so.575.57.08", tmp / "libcuda.so.1");
  DriverInfo info = detect_driver(empty_probe(tmp));
  EXPECT_EQ(text(info.version), "580.65.06");
  EXPECT_EQ(info.version_source, tmp / "proc-version");
  ASSERT_EQ(info.problems.size(), 1u);
  EXPECT_EQ(info.problems[0], std::filesystem::canonical(tmp / "libcuda.so.575.57.08").string() +
                                  " says driver 575.57.08 but " + tmp / "proc-version" +
                                  " says 580.65.06: CUDA calls fail with \"Driver/library version mismatch\"");
}

TEST(DriverDetect, NvidiaSmiScript) {
  test::TempDir tmp;
  std::string smi = tmp.write("nvidia-smi", "#!/bin/sh\necho 'NVIDIA H200, 9.0'\necho 'NVIDIA H200, 9.0'\n");
  std::filesystem::permissions(smi, std::filesystem::perms::owner_all);
  DriverProbe p = empty_probe(tmp);
  p.nvidia_smi = smi;
  DriverInfo info = detect_driver(p);
  EXPECT_EQ(info.gpus_source, "nvidia-smi");
  ASSERT_EQ(info.gpus.size(), 2u);
  EXPECT_EQ(info.gpus[1].sm, 90);
}

}  // namespace
}  // namespace envdoctor::cuda
