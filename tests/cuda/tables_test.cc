// The knowledge tables as shipped in data/cuda.json and data/sonames.json: the data check (every
// row has a source, versions increase, no release maps to two drivers), one test per row of the
// driver and PTX tables, where the tables end, and the loader's errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "cuda/arch.h"
#include "cuda/tables.h"
#include "fixtures/cuda_fixtures.h"
#include "fixtures/fixture.h"

namespace envdoctor::cuda {
namespace {

const CudaTables& shipped() { return test::shipped_cuda_tables(); }

using test::driver_version;
using test::text;
std::string text(const std::optional<MajorMinor>& v) { return v ? v->str() : "none"; }

std::string test_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// --- the data check ---

TEST(CudaData, ShippedTablesPassTheDataCheck) {
  EXPECT_EQ(check_tables(shipped()), std::vector<std::string>{});
  EXPECT_GT(shipped().toolkit_driver_minimum.size(), 40u);
}

TEST(CudaData, CheckFindsMissingSourcesDisorderAndTwoDrivers) {
  CudaTables t;
  t.sources = {{"S1", "https://docs.nvidia.com/..."}};
  t.toolkit_driver_minimum = {{{13, 0}, "13.0 GA", driver_version("580.65.06"), {"S1", true}},
                              {{12, 9}, "12.9 GA", driver_version("575.51.03"), {"", true}},
                              {{13, 0}, "13.0 GA", driver_version("580.82.07"), {"S7", false}}};
  t.ptx_isa = {{{9, 0}, {13, 0}, 590, {"S1", true}}, {{8, 8}, {12, 9}, 575, {"S1", true}}};
  EXPECT_EQ(check_tables(t),
            (std::vector<std::string>{
                "toolkit_driver_minimum \"12.9 GA\": no source",
                "toolkit_driver_minimum \"12.9 GA\": CUDA 12.9 after 13.0",
                "toolkit_driver_minimum \"12.9 GA\": driver 575.51.03 after 580.65.06",
                "toolkit_driver_minimum \"13.0 GA\": source S7 is not in \"sources\"",
                "toolkit_driver_minimum \"13.0 GA\": listed twice (580.65.06 and 580.82.07)",
                "ptx_isa 9.0: CUDA 13.0 is driver 580.65.06 in toolkit_driver_minimum but branch 590 here",
                "ptx_isa 8.8: not after 9.0",
                "ptx_isa 8.8: driver branch 575 not after 590",
            }));
}

// data/sonames.json: every library and placeholder names known sources and a confidence, and
// no SONAME is listed twice for one package.
TEST(CudaData, SonameRowsHaveSources) {
  std::ifstream in(std::string(ENVDOCTOR_SOURCE_DIR) + "/data/sonames.json");
  nlohmann::json j = nlohmann::json::parse(in);
  std::set<std::string> sources;
  for (const auto& [key, where] : j.at("sources").items()) sources.insert(key);
  static const std::regex key(R"(\b(S\d+b?|OLD)\b)");
  std::set<std::pair<std::string, std::string>> seen;
  auto check = [&](const nlohmann::json& row, const std::string& what) {
    std::string source = row.value("source", "");
    size_t keys = 0;
    for (std::sregex_iterator it(source.begin(), source.end(), key), end; it != end; ++it, ++keys)
      EXPECT_TRUE(sources.count((*it)[1])) << what << ": " << (*it)[1];
    EXPECT_GT(keys, 0u) << what << " has no source";
    std::string confidence = row.value("confidence", "");
    EXPECT_TRUE(confidence == "confirmed" || confidence == "secondary") << what << ": " << confidence;
  };
  for (const nlohmann::json& lib : j.at("libraries")) {
    std::string what = lib.at("soname").get<std::string>() + " of " + lib.at("package").get<std::string>();
    check(lib, what);
    EXPECT_TRUE(seen.emplace(lib.at("soname").get<std::string>(), lib.at("package").get<std::string>()).second)
        << what << " twice";
  }
  for (const nlohmann::json& p : j.at("placeholders")) check(p, p.at("name"));
}

// --- one test per row of the driver table: the row's driver runs that CUDA and no newer ---

class DriverTableRow : public ::testing::TestWithParam<ToolkitDriverMinimum> {};

TEST_P(DriverTableRow, DriverRunsThatCudaAndNoNewer) {
  const ToolkitDriverMinimum& row = GetParam();
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(row.linux_driver)), row.cuda.str());
  EXPECT_FALSE(shipped().driver_beyond_table(row.linux_driver));
  // The release's own requirement is at most this row's driver (the GA's, for an update).
  std::optional<DriverVersion> ga = shipped().full_compat_driver(row.cuda);
  ASSERT_TRUE(ga);
  EXPECT_LE(*ga, row.linux_driver);
  // One patch below the GA driver runs an older release only.
  if (*ga == row.linux_driver) {
    DriverVersion below = row.linux_driver;
    if (below.patch > 0) --below.patch;
    else --below.minor;
    std::optional<MajorMinor> older = shipped().newest_cuda_for_driver(below);
    EXPECT_TRUE(!older || *older < row.cuda) << below.major << "." << below.minor << "." << below.patch;
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, DriverTableRow,
                         ::testing::ValuesIn(test::shipped_cuda_tables().toolkit_driver_minimum),
                         [](const auto& info) { return test_name(info.param.release); });

TEST(CudaTables, DriverOfTheIssue) {
  // A 595.45.04 driver is CUDA 13.2 GA's minimum (Table 3), not "13.1 and older".
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("595.45.04"))), "13.2");
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("590.48.01"))), "13.1");
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("610.43.02"))), "13.3");  // secondary row
  // 13.4 has no Table 3 row; its driver branch is r615 (PTX ISA 9.4).
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("615.10"))), "13.4");
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("565.57.01"))), "12.7");  // PTX 8.6's r565
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("418.39"))), "none");     // older than every row
}

TEST(CudaTables, DriverNewerThanEveryRowIsUnknown) {
  EXPECT_EQ(text(shipped().newest_driver()), "615");
  EXPECT_TRUE(shipped().driver_beyond_table(driver_version("616.00")));
  EXPECT_TRUE(shipped().driver_beyond_table(driver_version("700.1.2")));
  EXPECT_FALSE(shipped().driver_beyond_table(driver_version("615.99.99")));
  EXPECT_EQ(text(shipped().newest_cuda_for_driver(driver_version("616.00"))), "none");
}

TEST(CudaTables, FullCompatibilityDriverIsTheGaDriver) {
  EXPECT_EQ(text(shipped().full_compat_driver({11, 0})), "450.51.05");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 0})), "525.60.13");
  EXPECT_EQ(text(shipped().full_compat_driver({12, 8})), "570.26");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 0})), "580.65.06");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 1})), "590.44.01");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 2})), "595.45.04");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 3})), "610.43.02");
  EXPECT_EQ(text(shipped().full_compat_driver({13, 4})), "615");   // the PTX table's branch
  EXPECT_EQ(text(shipped().full_compat_driver({13, 5})), "none");  // no driver found for 13.5
}

TEST(CudaTables, MinorVersionCompatibilityFloors) {
  EXPECT_EQ(text(shipped().minor_compat_driver(11)), "450.80.02");
  EXPECT_EQ(text(shipped().minor_compat_driver(12)), "525");
  EXPECT_EQ(text(shipped().minor_compat_driver(13)), "580");
  EXPECT_EQ(text(shipped().minor_compat_driver(10)), "none");
}

TEST(CudaTables, ReleasesNewerThanTheTable) {
  EXPECT_EQ(text(shipped().newest_release()), "13.4");
  EXPECT_FALSE(shipped().release_beyond_table({13, 4}));
  EXPECT_TRUE(shipped().release_beyond_table({13, 5}));
  EXPECT_TRUE(shipped().release_beyond_table({14, 0}));
}

// --- one test per row of the PTX table: the ISA needs its driver branch, and no more ---

class PtxTableRow : public ::testing::TestWithParam<PtxIsaRelease> {};

TEST_P(PtxTableRow, IsaNeedsItsDriverBranch) {
  const PtxIsaRelease& row = GetParam();
  EXPECT_EQ(text(shipped().cuda_for_ptx_isa(row.isa)), row.cuda.str());
  std::optional<DriverVersion> need = shipped().driver_for_ptx_isa(row.isa);
  if (row.driver_branch) {
    ASSERT_TRUE(need);
    EXPECT_EQ(need->text, std::to_string(*row.driver_branch));
  } else if (row.isa.major >= 9) {
    EXPECT_FALSE(need) << "a driver for PTX ISA " << row.isa.str() << " that NVIDIA has not given";
    return;
  } else {
    EXPECT_EQ(text(need), text(shipped().full_compat_driver(row.cuda)));
  }
  ASSERT_TRUE(need);
  // compute_75 PTX of this ISA on an 8.0 GPU: JIT-compiled at the driver it needs, not below it.
  FatbinEntry e;
  e.kind = FatbinEntry::Kind::kPtx;
  e.sm = 75;
  e.ptx_isa_major = row.isa.major;
  e.ptx_isa_minor = row.isa.minor;
  FatbinInfo info;
  info.entries = {e};
  EXPECT_EQ(classify(info, 80, *need, shipped()).kind, Coverage::Kind::kPtxJit);
  DriverVersion below = *need;
  if (below.patch > 0) --below.patch;
  else if (below.minor > 0) --below.minor;
  else --below.major;
  EXPECT_EQ(classify(info, 80, below, shipped()).kind, Coverage::Kind::kUnsupported) << below.text;
}

INSTANTIATE_TEST_SUITE_P(Shipped, PtxTableRow, ::testing::ValuesIn(test::shipped_cuda_tables().ptx_isa),
                         [](const auto& info) { return "isa" + test_name(info.param.isa.str()); });

TEST(CudaTables, PtxIsaToCudaRelease) {
  EXPECT_EQ(text(shipped().cuda_for_ptx_isa({8, 6})), "12.7");  // "CUDA 12.7, driver r565"
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({8, 6})), "565");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({9, 0})), "580");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({9, 4})), "615");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({9, 5})), "none");  // 13.5's driver branch unknown
  EXPECT_EQ(text(shipped().cuda_for_ptx_isa({99, 0})), "none");
  EXPECT_EQ(text(shipped().driver_for_ptx_isa({6, 4})), "450.51.05");  // pre-11: any table driver
  EXPECT_EQ(text(shipped().newest_ptx_isa_with_driver()), "9.4");
}

TEST(CudaTables, Architectures) {
  for (int sm : {75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121})
    EXPECT_FALSE(shipped().gpu_beyond_table(sm)) << sm;
  for (int sm : {122, 130, 95}) EXPECT_TRUE(shipped().gpu_beyond_table(sm)) << sm;
  EXPECT_FALSE(shipped().gpu_beyond_table(70));  // older than the table: judged as always
  EXPECT_EQ(shipped().current_sm(101), 110);
  EXPECT_EQ(shipped().current_sm(100), 100);
  EXPECT_EQ(shipped().minimum_sm(13), 75);
  EXPECT_EQ(shipped().minimum_sm(12), std::nullopt);  // not in the collected facts
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

TEST(CudaTables, BadConfidence) {
  test::TempDir tmp;
  tmp.write("cuda.json",
            R"({"toolkit_driver_minimum": [{"cuda": "12.0", "release": "GA", "linux": "525.60.13",
                "source": "S1", "confidence": "probably"}], "minor_version_compatibility": [], "ptx_isa": []})");
  std::string error;
  EXPECT_FALSE(load_cuda_tables(tmp.path().string(), &error));
  EXPECT_EQ(error, tmp / "cuda.json" + ": bad confidence \"probably\" (confirmed or secondary)");
}

TEST(CudaTables, DataDirOverride) {
  setenv("ENVDOCTOR_DATA_DIR", "/somewhere", 1);
  EXPECT_EQ(default_data_dir(), "/somewhere");
  unsetenv("ENVDOCTOR_DATA_DIR");
  EXPECT_EQ(default_data_dir(), ENVDOCTOR_DATA_DIR);
}

}  // namespace
}  // namespace envdoctor::cuda
