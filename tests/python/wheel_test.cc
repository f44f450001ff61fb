#include "python/wheel.h"

#include "fixtures/python_fixture.h"
#include "python/metadata_file.h"

namespace envdoctor::python {
namespace {

using nlohmann::json;
using test::TempDir;

class WheelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  }
  TempDir tmp;
};

using Members = std::vector<std::pair<std::string, std::string>>;

// Writes a zip with exactly these members (names as given, duplicates allowed). A text
// "zeros:N" stands for N zero bytes.
std::string raw_zip(const TempDir& tmp, const std::string& filename, const Members& members,
                    const std::string& compression = "ZIP_DEFLATED") {
  std::string path = tmp / filename;
  json list = json::array();
  for (const auto& [name, text] : members) list.push_back(json::array({name, text}));
  std::string py =
      "import json, sys, zipfile, warnings\nwarnings.simplefilter('ignore')\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile." +
      compression +
      ") as z:\n"
      "    for name, text in json.loads(sys.argv[2]):\n"
      "        data = bytes(int(text[6:])) if text.startswith('zeros:') else text.encode()\n"
      "        z.writestr(zipfile.ZipInfo(name), data, compress_type=z.compression)\n";
  test::CommandResult r =
      test::run("python3 -c " + test::quote(py) + " " + test::quote(path) + " " + test::quote(list.dump()));
  EXPECT_EQ(r.status, 0) << r.err;
  return path;
}

const Members kGoodInfo = {{"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"},
                           {"demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n"}};

TEST(WheelName, Parse) {
  std::string error;
  auto w = WheelName::parse("flash_attn-2.5.0-1post-cp310.cp311-cp310.cp311-manylinux_2_28_x86_64.whl", &error);
  ASSERT_TRUE(w) << error;
  EXPECT_EQ(w->name, "flash_attn");
  EXPECT_EQ(w->version, "2.5.0");
  EXPECT_EQ(w->build, "1post");
  EXPECT_EQ(w->python_tags, (std::vector<std::string>{"cp310", "cp311"}));
  EXPECT_EQ(w->abi_tags, (std::vector<std::string>{"cp310", "cp311"}));
  EXPECT_EQ(w->platform_tags, (std::vector<std::string>{"manylinux_2_28_x86_64"}));
  EXPECT_EQ(w->tags().size(), 4u);
  EXPECT_FALSE(WheelName::parse("foo-1.0-py3-none-any.zip", &error));
  EXPECT_EQ(error, "foo-1.0-py3-none-any.zip: not a .whl file name");
  EXPECT_FALSE(WheelName::parse("foo-1.0-any.whl", &error));
  EXPECT_EQ(error, "foo-1.0-any.whl: a wheel name has 5 or 6 parts separated by '-', this one has 3");
  EXPECT_FALSE(WheelName::parse("foo-1.0-x1-py3-none-any.whl", &error));
  EXPECT_EQ(error, "foo-1.0-x1-py3-none-any.whl: build tag 'x1' must start with a digit");
}

TEST_F(WheelTest, ReadsMetadataAndPlansPipsInstall) {
  std::string path =
      test::make_wheel(tmp.path().string(), {{"name", "Demo-Pkg"},
                                             {"version", "1.0"},
                                             {"tag", "cp311-cp311-linux_x86_64"},
                                             {"purelib", false},
                                             {"requires", {"numpy>=1.20", "pytest; extra == 'test'"}},
                                             {"files",
                                              {{"demo/__init__.py", "x = 1\n"},
                                               {"demo/_ext.so", "not really an ELF"},
                                               {"Demo_Pkg-1.0.data/scripts/demo-tool", "#!python\nprint(1)\n"},
                                               {"Demo_Pkg-1.0.data/headers/demo.h", "int demo;\n"},
                                               {"Demo_Pkg-1.0.data/purelib/demo_pure.py", "\n"},
                                               {"Demo_Pkg-1.0.data/data/share/demo/readme", "hi\n"}}}});
  std::string error;
  auto wheel = Wheel::open(path, &error);
  ASSERT_TRUE(wheel) << error;
  EXPECT_EQ(wheel->dist_info_dir(), "Demo_Pkg-1.0.dist-info");
  EXPECT_EQ(wheel->data_dir(), "Demo_Pkg-1.0.data");
  EXPECT_FALSE(wheel->root_is_purelib());
  const Distribution& meta = wheel->metadata();
  EXPECT_EQ(meta.name, "Demo-Pkg");
  EXPECT_EQ(meta.version, "1.0");
  EXPECT_TRUE(meta.problems.empty()) << meta.problems[0];
  ASSERT_EQ(meta.requires_dist.size(), 2u);
  EXPECT_EQ(meta.requires_dist[1].marker_text, "extra == 'test'");
  EXPECT_EQ(meta.record.size(), 9u);

  PythonEnvironment env;
  env.prefix = "/v";
  env.base_prefix = "/usr";
  env.version_info = {3, 11, 7};
  env.paths.purelib = "/v/lib/python3.11/site-packages";
  env.paths.platlib = "/v/lib64/python3.11/site-packages";
  env.paths.scripts = "/v/bin";
  env.paths.data = "/v";
  InstallScheme scheme = install_scheme(env, wheel->filename().project());
  std::vector<std::string> plan;
  for (const auto& [member, dest] : wheel->install_plan(scheme)) plan.push_back(member->name + " -> " + dest.string());
  // make_wheel.py writes the files in the order the JSON spec lists them (sorted by name).
  EXPECT_EQ(plan,
            (std::vector<std::string>{
                "Demo_Pkg-1.0.data/data/share/demo/readme -> /v/share/demo/readme",
                "Demo_Pkg-1.0.data/headers/demo.h -> /v/include/site/python3.11/Demo-Pkg/demo.h",
                "Demo_Pkg-1.0.data/purelib/demo_pure.py -> /v/lib/python3.11/site-packages/demo_pure.py",
                "Demo_Pkg-1.0.data/scripts/demo-tool -> /v/bin/demo-tool",
                "demo/__init__.py -> /v/lib64/python3.11/site-packages/demo/__init__.py",
                "demo/_ext.so -> /v/lib64/python3.11/site-packages/demo/_ext.so",
                "Demo_Pkg-1.0.dist-info/METADATA -> /v/lib64/python3.11/site-packages/Demo_Pkg-1.0.dist-info/METADATA",
                "Demo_Pkg-1.0.dist-info/WHEEL -> /v/lib64/python3.11/site-packages/Demo_Pkg-1.0.dist-info/WHEEL",
                "Demo_Pkg-1.0.dist-info/RECORD -> /v/lib64/python3.11/site-packages/Demo_Pkg-1.0.dist-info/RECORD",
            }));
  Distribution installed = wheel->as_installed(scheme);
  EXPECT_EQ(installed.metadata_dir, "/v/lib64/python3.11/site-packages/Demo_Pkg-1.0.dist-info");
  ASSERT_EQ(installed.record.size(), 9u);
  EXPECT_EQ(installed.record[5].resolved, "/v/lib64/python3.11/site-packages/demo/_ext.so");
  EXPECT_EQ(installed.record[5].size, 17u);
  EXPECT_EQ(installed.record[5].digest.size(), 32u);
  EXPECT_TRUE(installed.record[3].digest.empty());  // the script, whose shebang pip rewrites

  auto bytes = wheel->read("demo/_ext.so", 1024, &error);
  ASSERT_TRUE(bytes) << error;
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "not really an ELF");
  EXPECT_FALSE(wheel->read("demo/_ext.so", 16, &error));
  EXPECT_EQ(error, "Demo_Pkg-1.0-cp311-cp311-linux_x86_64.whl: demo/_ext.so: larger than 16 bytes");
  EXPECT_FALSE(wheel->read("demo/absent.py", 16, &error));
  EXPECT_EQ(error, "Demo_Pkg-1.0-cp311-cp311-linux_x86_64.whl: demo/absent.py: no such member");
}

TEST_F(WheelTest, RecordMismatchesAreProblems) {
  std::string path =
      test::make_wheel(tmp.path().string(), {{"name", "demo"},
                                             {"version", "1.0"},
                                             {"files", {{"demo.py", "\n"}}},
                                             {"raw", {{"demo/smuggled.py", "x"}, {"demo-1.0.data/weird/x", "y"}}}});
  std::string error;
  auto wheel = Wheel::open(path, &error);
  ASSERT_TRUE(wheel) << error;
  EXPECT_EQ(wheel->metadata().problems,
            (std::vector<std::string>{"'demo-1.0.data/weird/x' is not in RECORD", "'demo/smuggled.py' is not in RECORD",
                                      "'demo-1.0.data/weird/x' is in no scheme of demo-1.0.data/ (purelib, platlib, "
                                      "scripts, headers, data): pip refuses the wheel"}));
}

TEST_F(WheelTest, HostileArchivesAreRefused) {
  std::string error;
  std::string not_zip = tmp.write("junk-1.0-py3-none-any.whl", "this is not a zip archive at all");
  EXPECT_FALSE(Wheel::open(not_zip, &error));
  EXPECT_EQ(error, "junk-1.0-py3-none-any.whl: not a zip archive");

  std::string good = test::make_wheel(
      tmp.path().string(), {{"name", "cut"}, {"version", "1.0"}, {"files", {{"cut.py", std::string(5000, 'x')}}}});
  std::string truncated = tmp / "cut-2.0-py3-none-any.whl";
  fs::copy_file(good, truncated);
  fs::resize_file(truncated, fs::file_size(good) / 2);
  EXPECT_FALSE(Wheel::open(truncated, &error));
  EXPECT_EQ(error, "cut-2.0-py3-none-any.whl: not a zip archive");

  Members evil = kGoodInfo;
  evil.push_back({"../../etc/evil", "x"});
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.0-py3-none-any.whl", evil), &error));
  EXPECT_EQ(error, "demo-1.0-py3-none-any.whl: member '../../etc/evil' escapes the wheel");

  Members absolute = kGoodInfo;
  absolute.push_back({"/etc/evil", "x"});
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.1-py3-none-any.whl", absolute), &error));
  EXPECT_EQ(error, "demo-1.1-py3-none-any.whl: member '/etc/evil' escapes the wheel");

  Members twice = kGoodInfo;
  twice.push_back({"demo.py", "a"});
  twice.push_back({"demo.py", "b"});
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.2-py3-none-any.whl", twice), &error));
  EXPECT_EQ(error, "demo-1.2-py3-none-any.whl: two members have the same name");

  Members no_info = {{"demo.py", "a"}};
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.3-py3-none-any.whl", no_info), &error));
  EXPECT_EQ(error, "demo-1.3-py3-none-any.whl: .dist-info directory not found");

  Members wrong_name = {{"other-1.0.dist-info/WHEEL", "Root-Is-Purelib: true\n"}};
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.4-py3-none-any.whl", wrong_name), &error));
  EXPECT_EQ(error, "demo-1.4-py3-none-any.whl: .dist-info directory 'other-1.0.dist-info' does not start with 'demo'");

  Members two_infos = kGoodInfo;
  two_infos.push_back({"demo-2.0.dist-info/WHEEL", "Root-Is-Purelib: true\n"});
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.5-py3-none-any.whl", two_infos), &error));
  EXPECT_EQ(error,
            "demo-1.5-py3-none-any.whl: multiple .dist-info directories found: demo-1.0.dist-info, demo-2.0.dist-info");

  Members no_wheel = {{"demo-1.0.dist-info/METADATA", "Name: demo\n"}};
  EXPECT_FALSE(Wheel::open(raw_zip(tmp, "demo-1.6-py3-none-any.whl", no_wheel), &error));
  EXPECT_EQ(error, "demo-1.6-py3-none-any.whl: demo-1.0.dist-info/WHEEL is missing or unreadable");
}

TEST_F(WheelTest, ZipBombsAreRefused) {
  Members bomb = kGoodInfo;
  bomb.push_back({"zeros.bin", "zeros:4194304"});
  std::string deflated = raw_zip(tmp, "demo-1.0-py3-none-any.whl", bomb);
  std::string error;
  // Deflate stays under the ratio bound; the total bound stops it.
  EXPECT_FALSE(Wheel::open(deflated, &error, WheelLimits{.max_total = 1 << 20}));
  EXPECT_EQ(error, "demo-1.0-py3-none-any.whl: members declare more than 1048576 bytes in all");
  std::string bz2 = raw_zip(tmp, "demo-1.1-py3-none-any.whl", bomb, "ZIP_BZIP2");
  auto wheel = Wheel::open(bz2, &error);
  if (!wheel && error.find("expands") == std::string::npos) GTEST_SKIP() << "libzip without bzip2: " << error;
  EXPECT_FALSE(wheel);
  EXPECT_TRUE(error.starts_with("demo-1.1-py3-none-any.whl: member 'zeros.bin' expands 4194304 bytes from ")) << error;
  EXPECT_TRUE(error.ends_with(": refused as a zip bomb")) << error;
  // Within the bounds the member reads, but the total read is bounded too.
  wheel = Wheel::open(deflated, &error, WheelLimits{.max_total = 6 << 20});
  ASSERT_TRUE(wheel) << error;
  EXPECT_TRUE(wheel->read("zeros.bin", 8 << 20, &error));
  EXPECT_FALSE(wheel->read("zeros.bin", 8 << 20, &error));
  EXPECT_EQ(error, "demo-1.0-py3-none-any.whl: zeros.bin: the wheel's read bound is spent");
}

}  // namespace
}  // namespace envdoctor::python
