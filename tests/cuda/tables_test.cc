// The knowledge tables as shipped in data/cuda.json, and the loader's errors.
#include <gtest/gtest.h>

#include "cuda/tables.h"
#include "support/fixture.h"

namespace envdoctor::cuda {
namespace {

const CudaTables& shipped() {
  static CudaTables t = [] {
    std::string error;
    std::optional<CudaTables> loaded = load_cuda_tables(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", &error);
    EXPECT_TRUE(loaded) << error;
    return loaded.value_or(CudaTables{});
  }();
  return t;
}

std::string text(const std::optional<DriverVersion>& v) { return v ? v->text : "none"; }

TEST(CudaTables, FullCompatibilityDriverIsTheGaDriver) {
  EXPECT_EQ(text(shipped().full_compat_driver({11, 0})), "450.51.05");
  EXPECT_EQ(text(shipped().full_compat_driver({11, 8})), "520.61.05");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 0})), "525.60.13");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 4})), "550.54.14");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 8})), "570.26");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 9})), "575.51.03");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 0})), "580.65.06");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 7})), "none");  // never released
}

TEST(CudaTables, MinorVersionCompatibilityFloors) {
  EXPECT_EQ(text(shipped().minor_compat_driver(11)), "450.80.02");
  EXPECT_EQ(text(shipped().minor_compat_driver(12)), "525.60.13");
  EXPECT_EQ(text(shipped().minor_compat_driver(13)), "580");
  EXPECT_EQ(text(shipped().minor_compat_driver(10)), "none");
}

TEST(CudaTables, PtxIsaToCudaRelease) {
  auto cuda = [](int major, int minor) {
    std::optional<MajorMinor> v = shipped().cuda_for_ptx_isa({major, minor});
    return v ? v->str() : "none";
  };
  EXPECT_EQ(cuda(7, 0), "11.0");
  EXPECT_EQ(cuda(7, 8), "11.8");
  EXPECT_EQ(cuda(8, 0), "12.0");
  EXPECT_EQ(cuda(8, 6), "12.8");  // 8.6 went with the unreleased 12.7
  EXPECT_EQ(cuda(8, 8), "12.9");
  EXPECT_EQ(cuda(9, 0), "13.0");
  EXPECT_EQ(cuda(99, 0), "none");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({9, 0})), "580.65.06");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({6, 4})), "450.51.05");  // pre-11: any table driver
}

TEST(CudaTables, DriverVersionOrder) {
  EXPECT_LT(*DriverVersion::parse("570.26"), *DriverVersion::parse("570.124.06"));
  EXPECT_LT(*DriverVersion::parse("575.57.08"), *DriverVersion::parse("580"));
  EXPECT_EQ(*DriverVersion::parse("580.65.06"), *DriverVersion::parse("580.65.6"));
  EXPECT_EQ(DriverVersion::parse("580.x"), std::nullopt);
  EXPECT_EQ(DriverVersion::parse(""), std::nullopt);
  EXPECT_EQ(DriverVersion::parse("1.2.3.4"), std::nullopt);
  EXPECT_EQ(MajorMinor::parse("12080"), (MajorMinor{12, 8}));
  EXPECT_EQ(MajorMinor::parse("13.0"), (MajorMinor{13, 0}));
}

TEST(CudaTables, MissingFile) {
  test::TempDir tmp;
  std::string error;
  EXPECT_FALSE(load_cuda_tables(tmp.path().string(), &error));
  EXPECT_EQ(error, tmp / "cuda.json" + ": cannot open");
}

TEST(CudaTables, BadVersionNamesTheField) {
  test::TempDir tmp;
  tmp.write("cuda.json",
            R"({"toolkit_driver_minimum": [{"cuda": "12.x", "release": "GA", "linux": "1.2"}],
                "minor_version_compatibility": [], "ptx_isa": []})");
  std::string error;
  EXPECT_FALSE(load_cuda_tables(tmp.path().string(), &error));
  EXPECT_EQ(error, tmp / "cuda.json" + ": bad version in \"cuda\": \"12.x\"");
}

TEST(CudaTables, DataDirOverride) {
  setenv("ENVDOCTOR_DATA_DIR", "/somewhere", 1);
  EXPECT_EQ(default_data_dir(), "/somewhere");
  unsetenv("ENVDOCTOR_DATA_DIR");
  EXPECT_EQ(default_data_dir(), ENVDOCTOR_DATA_DIR);
}

}  // namespace
}  // namespace envdoctor::cuda
