// The compatibility rules, case by case, and classify() over fatbin listings.
#include <gtest/gtest.h>

#include "cuda/arch.h"

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
// "Feature Availability" (a: that GPU only; f: its family, same major and minor >= the target).
const RuleCase kRules[] = {
    {80, 0, 80, true, true},     {80, 0, 86, true, true},      {80, 0, 89, true, true},
    {86, 0, 80, false, false},   {80, 0, 90, false, true},     {75, 0, 80, false, true},
    {90, 0, 90, true, true},     {90, 0, 100, false, true},    {90, 'a', 90, true, true},
    {90, 'a', 100, false, false},{100, 'a', 103, false, false},{100, 'a', 100, true, true},
    {100, 'f', 100, true, true}, {100, 'f', 103, true, true},  {103, 'f', 100, false, false},
    {100, 'f', 110, false, false},{100, 'f', 120, false, false},{120, 'f', 121, true, true},
    {120, 0, 121, true, true},   {121, 0, 120, false, false},  {120, 0, 100, false, false},
    {100, 0, 120, false, true},
};

TEST(ArchRules, Table) {
  for (const RuleCase& c : kRules) {
    std::string what = std::to_string(c.sm) + (c.variant ? std::string(1, c.variant) : "") + " on " +
                       std::to_string(c.gpu);
    EXPECT_EQ(sass_runs_on(c.sm, c.variant, c.gpu), c.sass) << "SASS " << what;
    EXPECT_EQ(ptx_compiles_for(c.sm, c.variant, c.gpu), c.ptx) << "PTX " << what;
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
  t.toolkit_driver_minimum = {{{12, 8}, "12.8 GA", d("570.26")},
                              {{12, 8}, "12.8 Update 1", d("570.124.06")},
                              {{13, 0}, "13.0 GA", d("580.65.06")}};
  t.ptx_isa = {{{8, 7}, {12, 8}}, {{9, 0}, {13, 0}}};
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
  EXPECT_EQ(classify(info({sass(100, 'f')}), 120, driver("580.65.06"), tables()).kind,
            Coverage::Kind::kUnsupported);
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
  EXPECT_EQ(c.reason,
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
  EXPECT_FALSE(cuda::sass_runs_on(80, 0, 87));
  EXPECT_TRUE(cuda::sass_runs_on(87, 0, 87));
  EXPECT_FALSE(cuda::sass_runs_on(87, 0, 89));
  EXPECT_FALSE(cuda::sass_runs_on(72, 0, 75));
  EXPECT_TRUE(cuda::sass_runs_on(80, 0, 86));  // desktop to desktop is unchanged
  EXPECT_TRUE(cuda::ptx_compiles_for(80, 0, 87));  // PTX still JIT-compiles for Tegra
}

}  // namespace
}  // namespace envdoctor::test
