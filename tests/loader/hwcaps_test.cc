// The legacy hwcaps subdirectories and $PLATFORM for CPUs other than this one: each shape of
// glibc 2.36's _dl_important_hwcaps (elf/dl-hwcaps.c) with init_cpu_features' platform and hwcap
// bits (sysdeps/x86/cpu-features.c), so that the machine running the suite does not decide which
// shape is tested. The lists are glibc's scheme written out: temp[] holds the hwcap strings by bit,
// then the platform, then "tls"; entry k of 2^cnt - 1 holds the positions whose bit is set in
// 2^cnt - 1 - k, the last position first. This machine's own shape is compared with ld.so itself
// in fixture_test.cc (SubdirectoriesAreTheOnesThisCpuMakesLdSoTry).
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "loader/search_paths.h"

namespace envdoctor::test {
namespace {

using loader::CpuFeatures;
using loader::kHwcapImportant;
using loader::legacy_hwcaps;
using loader::legacy_subdirs;
using Dirs = std::vector<std::string>;

CpuFeatures amd_zen4() {
  CpuFeatures c;
  c.sse3 = c.ssse3 = c.sse4_1 = c.sse4_2 = c.popcnt = c.cx16 = c.lahf = true;
  c.avx = c.avx2 = c.bmi1 = c.bmi2 = c.f16c = c.fma = c.lzcnt = c.movbe = true;
  c.avx512f = c.avx512bw = c.avx512cd = c.avx512dq = c.avx512vl = true;
  return c;
}

CpuFeatures intel_haswell() {
  CpuFeatures c = amd_zen4();
  c.intel = true;
  c.avx512f = c.avx512bw = c.avx512cd = c.avx512dq = c.avx512vl = false;
  return c;
}

CpuFeatures intel_skylake_avx512() {
  CpuFeatures c = amd_zen4();
  c.intel = true;
  return c;
}

CpuFeatures intel_knights_landing() {
  CpuFeatures c = intel_haswell();
  c.avx512f = c.avx512cd = c.avx512er = c.avx512pf = true;
  return c;
}

// Not Intel: the kernel's AT_PLATFORM stays, and it is also the one hwcap string's name, so two
// positions carry "x86_64" and ld.so tries "tls/x86_64" and "x86_64" twice each.
TEST(LegacyHwcaps, PlatformNamedAsTheHwcapIsTriedTwice) {
  loader::LegacyHwcaps caps = legacy_hwcaps(amd_zen4(), "x86_64", kHwcapImportant);
  EXPECT_EQ(caps.platform, "x86_64");
  EXPECT_EQ(caps.hwcaps, Dirs{"x86_64"});
  EXPECT_EQ(legacy_subdirs(caps),
            (Dirs{"tls/x86_64/x86_64", "tls/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64", "x86_64"}));
}

// An Intel CPU with AVX2, FMA, BMI1/2, LZCNT, MOVBE and POPCNT is "haswell".
TEST(LegacyHwcaps, HaswellPlatform) {
  loader::LegacyHwcaps caps = legacy_hwcaps(intel_haswell(), "x86_64", kHwcapImportant);
  EXPECT_EQ(caps.platform, "haswell");
  EXPECT_EQ(legacy_subdirs(caps),
            (Dirs{"tls/haswell/x86_64", "tls/haswell", "tls/x86_64", "tls", "haswell/x86_64", "haswell", "x86_64"}));
}

// AVX-512 F, CD, BW, DQ and VL without ER add the avx512_1 hwcap: four positions, fifteen
// subdirectories, the later bit nearer the front.
TEST(LegacyHwcaps, HaswellWithAvx512) {
  loader::LegacyHwcaps caps = legacy_hwcaps(intel_skylake_avx512(), "x86_64", kHwcapImportant);
  EXPECT_EQ(caps.platform, "haswell");
  EXPECT_EQ(caps.hwcaps, (Dirs{"x86_64", "avx512_1"}));
  EXPECT_EQ(legacy_subdirs(caps),
            (Dirs{"tls/haswell/avx512_1/x86_64", "tls/haswell/avx512_1", "tls/haswell/x86_64", "tls/haswell",
                  "tls/avx512_1/x86_64", "tls/avx512_1", "tls/x86_64", "tls", "haswell/avx512_1/x86_64",
                  "haswell/avx512_1", "haswell/x86_64", "haswell", "avx512_1/x86_64", "avx512_1", "x86_64"}));
  // The same CPU from another vendor: no avx512_1, no haswell.
  EXPECT_EQ(legacy_hwcaps(amd_zen4(), "x86_64", kHwcapImportant).hwcaps, Dirs{"x86_64"});
}

// AVX-512 ER and PF: "xeon_phi", and no avx512_1 (ER excludes it); the haswell test is not made.
TEST(LegacyHwcaps, XeonPhiPlatform) {
  loader::LegacyHwcaps caps = legacy_hwcaps(intel_knights_landing(), "x86_64", kHwcapImportant);
  EXPECT_EQ(caps.platform, "xeon_phi");
  EXPECT_EQ(legacy_subdirs(caps), (Dirs{"tls/xeon_phi/x86_64", "tls/xeon_phi", "tls/x86_64", "tls", "xeon_phi/x86_64",
                                        "xeon_phi", "x86_64"}));
  // ER without PF: not a Xeon Phi, and still no avx512_1; haswell where its features are.
  CpuFeatures er_only = intel_knights_landing();
  er_only.avx512pf = false;
  caps = legacy_hwcaps(er_only, "x86_64", kHwcapImportant);
  EXPECT_EQ(caps.platform, "haswell");
  EXPECT_EQ(caps.hwcaps, Dirs{"x86_64"});
}

// No AT_PLATFORM and no Intel platform: only the hwcap strings and tls; with the mask 0 as well,
// "tls" alone (cnt == 1 in glibc).
TEST(LegacyHwcaps, NoPlatform) {
  loader::LegacyHwcaps caps = legacy_hwcaps(amd_zen4(), nullptr, kHwcapImportant);
  EXPECT_EQ(caps.platform, "");
  EXPECT_EQ(legacy_subdirs(caps), (Dirs{"tls/x86_64", "tls", "x86_64"}));
  EXPECT_EQ(legacy_subdirs(legacy_hwcaps(amd_zen4(), nullptr, 0)), Dirs{"tls"});
}

// The mask selects hwcap bits, never the platform: 0 leaves "tls" and the platform; 4 keeps
// avx512_1 alone where the CPU sets it.
TEST(LegacyHwcaps, MaskSelectsHwcapBits) {
  EXPECT_EQ(legacy_subdirs(legacy_hwcaps(amd_zen4(), "x86_64", 0)), (Dirs{"tls/x86_64", "tls", "x86_64"}));
  loader::LegacyHwcaps caps = legacy_hwcaps(intel_skylake_avx512(), "x86_64", loader::kHwcapX86Avx512_1);
  EXPECT_EQ(caps.hwcaps, Dirs{"avx512_1"});
  EXPECT_EQ(legacy_subdirs(caps), (Dirs{"tls/haswell/avx512_1", "tls/haswell", "tls/avx512_1", "tls",
                                        "haswell/avx512_1", "haswell", "avx512_1"}));
}

// $PLATFORM with no platform drops the element, as an unknown $ORIGIN does (_dl_dst_substitute).
TEST(LegacyHwcaps, PlatformTokenWithoutPlatformDropsTheElement) {
  loader::LoaderConfig config;
  config.dst_platform = "";
  EXPECT_FALSE(loader::expand_dst("/opt/$PLATFORM/lib", std::string("/x"), config));
  config.dst_platform = "haswell";
  EXPECT_EQ(loader::expand_dst("/opt/${PLATFORM}/lib", std::string("/x"), config), "/opt/haswell/lib");
}

// The mask as ld.so takes it: GLIBC_TUNABLES' last glibc.cpu.hwcap_mask over LD_HWCAP_MASK, each read
// by _dl_strtoul; the referee is `ld.so --list-tunables`, which prints the value it took.
TEST(LegacyHwcaps, MaskReadAsLdSoReadsIt) {
  const std::string ld_so = "/lib64/ld-linux-x86-64.so.2";
  CommandResult probe = run(ld_so + " --list-tunables");
  if (probe.status != 0 || probe.out.find("glibc.cpu.hwcap_mask: ") == std::string::npos)
    GTEST_SKIP() << "needs a glibc ld.so with --list-tunables and glibc.cpu.hwcap_mask";
  struct Case {
    const char* tunables;
    const char* ld_hwcap_mask;
  };
  for (Case c : std::vector<Case>{{"", nullptr},
                                  {"glibc.cpu.hwcap_mask=0", nullptr},
                                  {"glibc.cpu.hwcap_mask=2junk", nullptr},
                                  {"glibc.cpu.hwcap_mask=0x", nullptr},
                                  {"glibc.cpu.hwcap_mask=010", nullptr},
                                  {"glibc.cpu.hwcap_mask=-1", nullptr},
                                  {"glibc.cpu.hwcap_mask=99999999999999999999999", nullptr},
                                  {"glibc.cpu.hwcap_mask=0:glibc.cpu.hwcap_mask=4", nullptr},
                                  {"glibc.cpu.hwcap_mask:glibc.cpu.hwcap_mask=0x10", nullptr},
                                  {"", "0"},
                                  {"", "junk"},
                                  {"", " 0x7"},
                                  {"glibc.cpu.hwcap_mask=0xff", "0"},
                                  {"glibc.rtld.nns=2", "3"}}) {
    SCOPED_TRACE(std::string(c.tunables) + " / " + (c.ld_hwcap_mask ? c.ld_hwcap_mask : "(unset)"));
    std::string cmd = "env -u LD_HWCAP_MASK GLIBC_TUNABLES=" + quote(c.tunables);
    if (c.ld_hwcap_mask) cmd += " LD_HWCAP_MASK=" + quote(c.ld_hwcap_mask);
    CommandResult r = run(cmd + " " + ld_so + " --list-tunables");
    ASSERT_EQ(r.status, 0) << r.err;
    size_t at = r.out.find("glibc.cpu.hwcap_mask: ");
    ASSERT_NE(at, std::string::npos) << r.out;
    u64 listed = std::stoull(r.out.substr(at + 22), nullptr, 0);
    EXPECT_EQ(loader::hwcap_mask(c.tunables, c.ld_hwcap_mask), listed);
  }
}

}  // namespace
}  // namespace envdoctor::test
