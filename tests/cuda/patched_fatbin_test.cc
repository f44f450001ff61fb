// Architectures and PTX ISAs this machine's nvcc (CUDA 13.0) cannot write, made by patching the
// entry headers of its real output: Thor's sm_101 of CUDA <= 12.9, PTX ISA 9.4 (CUDA 13.4) and
// 9.5. The independent header walk (tests/fixtures/fatbin_walk.py) says what each patched file
// holds; envdoctor's reader must list the same, and the rules must judge it as NVIDIA's tables say.
#include <gtest/gtest.h>

#include "cuda/arch.h"
#include "cuda/fatbin.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/fixture.h"

namespace envdoctor::cuda {
namespace {

using test::kCudaData;
using test::kNvcc;

// The file's fatbinary as envdoctor reads it, and each entry in the walk's words.
struct Listing {
  FatbinInfo info;
  std::vector<std::string> lines;
};

Listing read_listing(const std::string& path) {
  std::string error;
  std::shared_ptr<const MappedFile> file(MappedFile::open(path, &error).release());
  EXPECT_TRUE(file) << error;
  if (!file) return {};
  std::unique_ptr<elf::ElfFile> elf = elf::ElfFile::parse(file, &error);
  EXPECT_TRUE(elf) << error;
  if (!elf) return {};
  Listing l{read_fatbins(*elf), {}};
  EXPECT_EQ(l.info.problems, std::vector<std::string>{}) << path;
  for (const FatbinEntry& e : l.info.entries) {
    if (e.relocatable) continue;
    std::string s = e.arch_name();
    if (e.kind == FatbinEntry::Kind::kPtx)
      s += " isa" + std::to_string(e.ptx_isa_major) + "." + std::to_string(e.ptx_isa_minor);
    l.lines.push_back(s);
  }
  return l;
}

// `fixture` copied to `out` with every header passed through `patch`; the walk's listing of the
// copy must be `expected`, and so must envdoctor's.
Listing patched(const std::string& fixture, const std::string& out, const std::function<void(u8*)>& patch,
                const std::vector<std::string>& expected) {
  std::vector<u8> bytes = test::read_bytes(fixture);
  test::for_each_fatbin_entry(bytes, patch);
  test::write_bytes(out, bytes);
  bool skipped = false;
  std::vector<std::string> walk = test::fatbin_walk(out, &skipped);
  if (!skipped) {
    EXPECT_EQ(walk, expected) << "the header walk";
  }
  Listing l = read_listing(out);
  EXPECT_EQ(l.lines, expected) << "envdoctor's reader";
  return l;
}

using test::driver_version;

TEST(PatchedFatbin, WalkAgreesWithTheCommittedFixtures) {
  bool skipped = false;
  for (const char* name : {"sm80.so", "sm80_ptx.so", "sm90a.so", "sm100f.so", "compressed.so", "ptx90_plain.so"}) {
    std::vector<std::string> walk = test::fatbin_walk(kCudaData + name, &skipped);
    if (skipped) GTEST_SKIP() << "python3 not installed";
    EXPECT_EQ(walk, read_listing(kCudaData + name).lines) << name;
  }
}

// nvcc 13.0's own sm_100f cubin on a 10.7 GPU (Rubin, in compute_100f's family since table 28
// lists 10.7); not on 11.0 or 12.0.
TEST(PatchedFatbin, Sm100fCubinRunsOnSm107) {
  const CudaTables& t = test::shipped_cuda_tables();
  bool skipped = false;
  std::vector<std::string> walk = test::fatbin_walk(kCudaData + "sm100f.so", &skipped);
  if (!skipped) {
    EXPECT_EQ(walk, (std::vector<std::string>{"sm_100f", "compute_100f isa9.0"}));
  }
  FatbinInfo info = read_listing(kCudaData + "sm100f.so").info;
  Coverage c = classify(info, 107, driver_version("580.65.06"), t);
  EXPECT_EQ(c.kind, Coverage::Kind::kSass);
  EXPECT_EQ(c.reason, "SASS sm_100f runs on 10.7");
  EXPECT_EQ(classify(info, 103, driver_version("580.65.06"), t).kind, Coverage::Kind::kSass);
  EXPECT_EQ(classify(info, 110, driver_version("580.65.06"), t).kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(classify(info, 120, driver_version("580.65.06"), t).kind, Coverage::Kind::kUnsupported);
}

// A cubin for sm_101, as CUDA 12.9 and older numbered Thor, runs on the sm_110 GPU that CUDA 13
// reports, and on nothing of major 10.
TEST(PatchedFatbin, Sm101CubinRunsOnSm110) {
  const CudaTables& t = test::shipped_cuda_tables();
  test::TempDir tmp;
  Listing l = patched(kCudaData + "sm80.so", tmp / "sm101.so", [](u8* h) { test::set_entry_arch(h, 101); }, {"sm_101"});
  Coverage thor = classify(l.info, 110, driver_version("580.65.06"), t);
  EXPECT_EQ(thor.kind, Coverage::Kind::kSass);
  EXPECT_EQ(thor.reason, "SASS sm_101 runs on 11.0");
  for (int gpu : {100, 103, 107, 120})
    EXPECT_EQ(classify(l.info, gpu, driver_version("580.65.06"), t).kind, Coverage::Kind::kUnsupported) << gpu;
}

// The other way: nvcc 13.0's sm_110 cubin on a Thor that a CUDA 12.x driver reports as 10.1.
TEST(PatchedFatbin, NvccSm110CubinRunsOnThorReportedAs101) {
  if (!test::have_tool(kNvcc)) GTEST_SKIP() << "nvcc not installed";
  test::TempDir tmp;
  std::string cu = tmp.write("k.cu", "__global__ void k(int* p) { *p = 1; }\n");
  test::CommandResult r =
      test::run(kNvcc + " -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_110,code=sm_110 -o " +
                tmp / "sm110.so " + cu);
  ASSERT_EQ(r.status, 0) << r.err;
  bool skipped = false;
  std::vector<std::string> walk = test::fatbin_walk(tmp / "sm110.so", &skipped);
  if (!skipped) {
    EXPECT_EQ(walk, std::vector<std::string>{"sm_110"});
  }
  FatbinInfo info = read_listing(tmp / "sm110.so").info;
  EXPECT_EQ(classify(info, 101, std::nullopt, test::shipped_cuda_tables()).kind, Coverage::Kind::kSass);
  EXPECT_EQ(classify(info, 100, std::nullopt, test::shipped_cuda_tables()).kind, Coverage::Kind::kUnsupported);
}

// PTX ISA 9.4 (CUDA 13.4, driver branch r615) on a 590 driver: it fits the GPU, but the driver
// cannot JIT it; a 615 driver can.
TEST(PatchedFatbin, Ptx94OnA590Driver) {
  const CudaTables& t = test::shipped_cuda_tables();
  test::TempDir tmp;
  Listing l =
      patched(kCudaData + "sm80_ptx.so", tmp / "ptx94.so", test::ptx_isa_patch(9, 4), {"sm_80", "compute_80 isa9.4"});
  Coverage c = classify(l.info, 90, driver_version("590.44.01"), t);
  EXPECT_EQ(c.kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(c.reason,
            "no SASS for 9.0 (has sm_80); PTX compute_80 is ISA 9.4, which needs driver 615 or newer, "
            "and the driver is 590.44.01");
  EXPECT_EQ(classify(l.info, 90, driver_version("615.20"), t).kind, Coverage::Kind::kPtxJit);
  // Minor-version compatibility does not reach PTX: 595.45.04 runs a 13.4 runtime, not its PTX.
  EXPECT_EQ(classify(l.info, 90, driver_version("595.45.04"), t).kind, Coverage::Kind::kUnsupported);
}

// PTX ISA 9.5: CUDA 13.5, whose driver branch nobody has given. Below the newest driver the
// table knows it certainly cannot JIT; above, it is unknown and said to be.
TEST(PatchedFatbin, Ptx95IsUnknownOnANewDriver) {
  const CudaTables& t = test::shipped_cuda_tables();
  test::TempDir tmp;
  Listing l =
      patched(kCudaData + "sm80_ptx.so", tmp / "ptx95.so", test::ptx_isa_patch(9, 5), {"sm_80", "compute_80 isa9.5"});
  Coverage newer = classify(l.info, 90, driver_version("620.10"), t);
  EXPECT_EQ(newer.kind, Coverage::Kind::kPtxJit);
  EXPECT_TRUE(newer.ptx_isa_unknown);
  Coverage older = classify(l.info, 90, driver_version("590.44.01"), t);
  EXPECT_EQ(older.kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(older.reason,
            "no SASS for 9.0 (has sm_80); PTX compute_80 is ISA 9.5, which needs a driver newer than "
            "615, and the driver is 590.44.01");
}

}  // namespace
}  // namespace envdoctor::cuda
