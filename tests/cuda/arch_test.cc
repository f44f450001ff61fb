// The compatibility rules, case by case, and classify() over fatbin listings.
#include <gtest/gtest.h>

#include <algorithm>

#include "cuda/arch.h"
#include "fixtures/cuda_fixtures.h"

namespace envdoctor::cuda {
namespace {

struct RuleCase {
  int sm;
  char variant;
  int gpu;
  bool sass;
  bool ptx;
};

// Programming Guide "Binary Compatibility" / "PTX Compatibility", and for the variants
// "Feature Availability" (a: that GPU only; f: its family, table 28). Thor's sm_101 of CUDA <= 12.9
// is sm_110 (cuRANDDx release notes, PTX ISA 9.4).
const RuleCase kRules[] = {
    {80, 0, 80, true, true},       {80, 0, 86, true, true},       {80, 0, 89, true, true},
    {86, 0, 80, false, false},     {80, 0, 90, false, true},      {75, 0, 80, false, true},
    {90, 0, 90, true, true},       {90, 0, 100, false, true},     {90, 'a', 90, true, true},
    {90, 'a', 100, false, false},  {100, 'a', 103, false, false}, {100, 'a', 100, true, true},
    {100, 'f', 100, true, true},   {100, 'f', 103, true, true},   {103, 'f', 100, false, false},
    {100, 'f', 110, false, false}, {100, 'f', 120, false, false}, {120, 'f', 121, true, true},
    {120, 0, 121, true, true},     {121, 0, 120, false, false},   {120, 0, 100, false, false},
    {100, 0, 120, false, true},    {100, 'f', 107, true, true},   {103, 'f', 107, true, true},
    {107, 'f', 103, false, false}, {110, 'f', 110, true, true},   {121, 'f', 120, false, false},
    {101, 0, 110, true, true},     {101, 'a', 110, true, true},   {110, 0, 101, true, true},
    {101, 0, 100, false, false},   {101, 0, 103, false, false},   {100, 0, 110, false, true},
    {86, 0, 88, true, true},       {88, 0, 89, true, true},       {75, 0, 88, false, true},
};

TEST(ArchRules, Table) {
  for (const RuleCase& c : kRules) {
    std::string what =
        std::to_string(c.sm) + (c.variant ? std::string(1, c.variant) : "") + " on " + std::to_string(c.gpu);
    EXPECT_EQ(sass_runs_on(test::shipped_cuda_tables(), c.sm, c.variant, c.gpu), c.sass) << "SASS " << what;
    EXPECT_EQ(ptx_compiles_for(test::shipped_cuda_tables(), c.sm, c.variant, c.gpu), c.ptx) << "PTX " << what;
  }
}

TEST(ArchRules, ComputeCapabilityText) {
  EXPECT_EQ(parse_compute_capability("9.0"), 90);
  EXPECT_EQ(parse_compute_capability("12.1"), 121);
  EXPECT_EQ(parse_compute_capability("8.6"), 86);
  EXPECT_EQ(parse_compute_capability("90"), std::nullopt);
  EXPECT_EQ(parse_compute_capability("8.10"), std::nullopt);
  EXPECT_EQ(parse_compute_capability("[N/A]"), std::nullopt);
  EXPECT_EQ(compute_capability_name(121), "12.1");
}

FatbinEntry sass(int sm, char variant = 0, u32 container = 0) {
  FatbinEntry e;
  e.kind = FatbinEntry::Kind::kSass;
  e.sm = sm;
  e.variant = variant;
  e.container = container;
  return e;
}

FatbinEntry ptx(int sm, int isa_major, int isa_minor, char variant = 0, u32 container = 0) {
  FatbinEntry e;
  e.kind = FatbinEntry::Kind::kPtx;
  e.sm = sm;
  e.variant = variant;
  e.ptx_isa_major = isa_major;
  e.ptx_isa_minor = isa_minor;
  e.container = container;
  return e;
}

CudaTables tables() {
  CudaTables t;
  auto d = [](const char* s) { return *DriverVersion::parse(s); };
  t.toolkit_driver_minimum = {{{12, 8}, "12.8 GA", d("570.26"), {}},
                              {{12, 8}, "12.8 Update 1", d("570.124.06"), {}},
                              {{13, 0}, "13.0 GA", d("580.65.06"), {}}};
  t.ptx_isa = {{{8, 7}, {12, 8}, std::nullopt, {}}, {{9, 0}, {13, 0}, std::nullopt, {}}};
  t.architectures = test::shipped_cuda_tables().architectures;
  t.families = test::shipped_cuda_tables().families;
  return t;
}

FatbinInfo info(std::vector<FatbinEntry> entries) {
  FatbinInfo i;
  i.entries = std::move(entries);
  return i;
}

std::optional<DriverVersion> driver(const char* v) { return DriverVersion::parse(v); }

TEST(Classify, SassForTheSameMajorRuns) {
  Coverage c = classify(info({sass(80), sass(90)}), 86, driver("580.65.06"), tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kSass);
  EXPECT_EQ(c.reason, "SASS sm_80 runs on 8.6");
  ASSERT_EQ(c.deciding.size(), 1u);
  EXPECT_EQ(c.deciding[0].sm, 80);
}

TEST(Classify, OnlyPtxFitsANewerGpu) {
  Coverage c = classify(info({sass(80), ptx(80, 9, 0)}), 90, driver("580.65.06"), tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kPtxJit);
  EXPECT_EQ(c.reason, "no SASS for 9.0; PTX compute_80 is JIT-compiled on first use");
}

TEST(Classify, PtxNewerThanTheDriverCannotJit) {
  Coverage c = classify(info({sass(80), ptx(80, 9, 0)}), 90, driver("570.124.06"), tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(c.reason,
            "no SASS for 9.0 (has sm_80); PTX compute_80 is ISA 9.0, which needs driver 580.65.06 or newer, "
            "and the driver is 570.124.06");
  ASSERT_EQ(c.deciding.size(), 1u);
  EXPECT_EQ(c.deciding[0].kind, FatbinEntry::Kind::kPtx);
}

TEST(Classify, UnknownDriverAssumesPtxJits) {
  Coverage c = classify(info({ptx(80, 9, 0)}), 90, std::nullopt, tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kPtxJit);
}

TEST(Classify, ArchSpecificSassRunsOnlyOnItsGpu) {
  Coverage h100 = classify(info({sass(90, 'a')}), 90, driver("580.65.06"), tables());
  EXPECT_EQ(h100.kind, Coverage::Kind::kSass);
  Coverage b200 = classify(info({sass(90, 'a'), ptx(90, 9, 0, 'a')}), 100, driver("580.65.06"), tables());
  EXPECT_EQ(b200.kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(b200.reason, "no SASS for 10.0 (has sm_90a) and no PTX it can JIT (has compute_90a)");
}

TEST(Classify, FamilySpecificSassRunsAcrossTheFamily) {
  Coverage c = classify(info({sass(100, 'f')}), 103, driver("580.65.06"), tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kSass);
  EXPECT_EQ(c.reason, "SASS sm_100f runs on 10.3");
  EXPECT_EQ(classify(info({sass(100, 'f')}), 120, driver("580.65.06"), tables()).kind, Coverage::Kind::kUnsupported);
}

TEST(Classify, NoSassNoPtx) {
  Coverage c = classify(info({sass(75), sass(80)}), 120, std::nullopt, tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kUnsupported);
  EXPECT_EQ(c.reason, "no SASS for 12.0 (has sm_75, sm_80) and no PTX");
}

TEST(Classify, RelocatableImagesDoNotCount) {
  FatbinEntry rel = sass(90);
  rel.relocatable = true;
  Coverage c = classify(info({rel}), 90, std::nullopt, tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kNoDeviceCode);
  EXPECT_EQ(c.reason, "no GPU code");
}

TEST(Classify, UnknownVariantIsUncertainOnlyOnAnotherGpu) {
  FatbinEntry maybe_a = sass(90);
  maybe_a.variant_known = false;
  Coverage same = classify(info({maybe_a}), 90, std::nullopt, tables());
  EXPECT_EQ(same.kind, Coverage::Kind::kSass);
  EXPECT_FALSE(same.variant_uncertain);
  maybe_a.sm = 100;
  Coverage other = classify(info({maybe_a}), 103, std::nullopt, tables());
  EXPECT_EQ(other.kind, Coverage::Kind::kSass);
  EXPECT_TRUE(other.variant_uncertain);
  EXPECT_EQ(other.reason,
            "SASS sm_100 runs on 10.3 unless it is an arch-specific (a) build, which the compressed image hides");
}

TEST(Classify, PtxIsaNewerThanTheTable) {
  Coverage c = classify(info({ptx(90, 9, 9)}), 100, driver("580.65.06"), tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kPtxJit);
  EXPECT_TRUE(c.ptx_isa_unknown);
  EXPECT_EQ(
      c.reason,
      "no SASS for 10.0; PTX compute_90 is JIT-compiled on first use (PTX ISA 9.9 is newer than the known table)");
}

TEST(Classify, ModulesWithoutCodeAreCounted) {
  // Two registered modules: one with sm_80 SASS, one with sm_90a only (a Hopper-only kernel).
  Coverage c = classify(info({sass(80, 0, 0), sass(90, 'a', 1)}), 86, std::nullopt, tables());
  EXPECT_EQ(c.kind, Coverage::Kind::kSass);
  EXPECT_EQ(c.modules, 2u);
  EXPECT_EQ(c.modules_without_code, 1u);
}

TEST(Classify, KindNames) {
  EXPECT_STREQ(coverage_kind_name(Coverage::Kind::kPtxJit), "ptx-jit");
  EXPECT_STREQ(coverage_kind_name(Coverage::Kind::kUnsupported), "unsupported");
}

}  // namespace
}  // namespace envdoctor::cuda

namespace envdoctor::test {
namespace {

// The binary compatibility of the programming guide is for desktop GPUs: a cubin for 8.0 does
// not run on Orin (8.7), and Orin's own cubins run nowhere else.
TEST(ArchRules, TegraRunsOnlyItsOwnCubins) {
  const cuda::CudaTables& t = shipped_cuda_tables();
  EXPECT_FALSE(cuda::sass_runs_on(t, 80, 0, 87));
  EXPECT_TRUE(cuda::sass_runs_on(t, 87, 0, 87));
  EXPECT_FALSE(cuda::sass_runs_on(t, 87, 0, 89));
  EXPECT_FALSE(cuda::sass_runs_on(t, 72, 0, 75));
  EXPECT_TRUE(cuda::sass_runs_on(t, 80, 0, 86));      // desktop to desktop is unchanged
  EXPECT_TRUE(cuda::ptx_compiles_for(t, 80, 0, 87));  // PTX still JIT-compiles for Tegra
}

// NVIDIA's family table (Programming Guide table 28, the CUDA 12.9 blog), written out here from
// the text, one test per family: data/cuda.json says the same, and an `f` cubin and `f` PTX run on
// exactly these of the known GPUs.
struct FamilyCase {
  int sm;
  std::vector<int> runs_on;
};
class FamilyTable : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(FamilyTable, RunsOnExactlyItsFamily) {
  const cuda::CudaTables& t = shipped_cuda_tables();
  const FamilyCase& c = GetParam();
  const std::vector<int>* data = t.family(c.sm);
  ASSERT_TRUE(data) << "no family row for sm_" << c.sm << "f";
  EXPECT_EQ(*data, c.runs_on);
  for (const cuda::Architecture& gpu : t.architectures) {
    bool expected = std::find(c.runs_on.begin(), c.runs_on.end(), gpu.sm) != c.runs_on.end();
    EXPECT_EQ(cuda::sass_runs_on(t, c.sm, 'f', gpu.sm), expected) << "sm_" << c.sm << "f on sm_" << gpu.sm;
    EXPECT_EQ(cuda::ptx_compiles_for(t, c.sm, 'f', gpu.sm), expected) << "compute_" << c.sm << "f on sm_" << gpu.sm;
  }
}

INSTANTIATE_TEST_SUITE_P(Nvidia, FamilyTable,
                         ::testing::Values(FamilyCase{100, {100, 103, 107}}, FamilyCase{103, {103, 107}},
                                           FamilyCase{107, {107}}, FamilyCase{110, {110}}, FamilyCase{120, {120, 121}},
                                           FamilyCase{121, {121}}),
                         [](const auto& info) { return "sm_" + std::to_string(info.param.sm) + "f"; });

TEST(FamilyTable, EveryFamilyRowIsTested) { EXPECT_EQ(shipped_cuda_tables().families.size(), 6u); }

// A GPU the architecture table does not know is not judged by the rules: sm_120 SASS on a
// "13.0" GPU is neither said to run nor said not to.
TEST(Classify, GpuNewerThanTheTableIsUnknown) {
  const cuda::CudaTables& t = shipped_cuda_tables();
  cuda::FatbinInfo info;
  cuda::FatbinEntry e;
  e.kind = cuda::FatbinEntry::Kind::kSass;
  e.sm = 120;
  info.entries = {e};
  for (int gpu : {130, 122, 125}) {
    cuda::Coverage c = cuda::classify(info, gpu, std::nullopt, t);
    EXPECT_EQ(c.kind, cuda::Coverage::Kind::kUnknown) << gpu;
  }
  EXPECT_EQ(cuda::classify(info, 130, std::nullopt, t).reason,
            "13.0 is newer than the architectures this envdoctor knows (up to 12.1)");
  EXPECT_EQ(cuda::classify(info, 121, std::nullopt, t).kind, cuda::Coverage::Kind::kSass);
  // Older GPUs than the table's first row are judged as always: sm_70 cannot run sm_120 SASS.
  EXPECT_EQ(cuda::classify(info, 70, std::nullopt, t).kind, cuda::Coverage::Kind::kUnsupported);
  // Thor under a CUDA <= 12.9 driver reports 10.1: the same GPU as sm_110.
  EXPECT_FALSE(t.gpu_beyond_table(101));
  EXPECT_STREQ(cuda::coverage_kind_name(cuda::Coverage::Kind::kUnknown), "unknown");
}

}  // namespace
}  // namespace envdoctor::test
