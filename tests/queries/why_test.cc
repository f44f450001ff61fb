// `envdoctor why NAME` on a real venv: where a library resolves for each consumer must be
// where glibc's ld.so (trace mode) resolves it; a package lists its files' needs and its users.
#include <gtest/gtest.h>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

// One venv for the suite: building it is most of the time.
class WhyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_tool("gcc") || !have_tool("python3") || !python3_facts().pip) return;
    std::string include = python_include();
    if (!fs::exists(include + "/Python.h")) return;
    tmp_ = std::make_unique<TempDir>();
    const TempDir& tmp = *tmp_;
    fs::create_directories(tmp / "wheels");
    suffix_ = ext_suffix();
    std::string lib = tmp / "build/core/corelib/lib/libcorelib.so.2";
    build_shared(lib, "int core_fn(void) { return 2; }", "-Wl,-soname,libcorelib.so.2", tmp);
    std::string ext = tmp / ("build/user/_use" + suffix_);
    build_shared(ext, extension_source("_use", "int core_fn(void);", "core_fn()"),
                 "-I" + quote(include) + " " + quote(lib) + " -Wl,-rpath,'$ORIGIN/../corelib/lib'", tmp);
    std::string core = make_wheel(tmp / "wheels", {{"name", "corelib"},
                                                   {"version", "2.1"},
                                                   {"tag", "cp311-cp311-linux_x86_64"},
                                                   {"purelib", false},
                                                   {"paths", {{"corelib/lib/libcorelib.so.2", lib}}}});
    std::string user = make_wheel(tmp / "wheels", {{"name", "userlib"},
                                                   {"version", "0.3"},
                                                   {"tag", "cp311-cp311-linux_x86_64"},
                                                   {"purelib", false},
                                                   {"requires", {"corelib"}},
                                                   {"paths", {{"userlib/_use" + suffix_, ext}}}});
    venv_ = std::make_unique<Venv>(tmp, "v");
    venv_->install({core, user});
  }
  static void TearDownTestSuite() {
    venv_.reset();
    tmp_.reset();
  }
  void SetUp() override {
    if (!venv_) GTEST_SKIP() << "needs gcc, python3 with pip and Python.h";
  }

  CommandResult why(const std::string& name) {
    return run(quote(envdoctor()) + " why --python " + quote(venv_->python()) + " " + quote(name));
  }

  static inline std::unique_ptr<TempDir> tmp_;
  static inline std::string suffix_ = ext_suffix();
  static inline std::unique_ptr<Venv> venv_;
};

TEST_F(WhyTest, ASonameResolvesWhereLdSoResolvesIt) {
  std::string site = venv_->site();
  std::string consumer = site + "/userlib/_use" + suffix_;
  CommandResult referee = run("LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 " + quote(consumer));
  std::string marker = "libcorelib.so.2 => ";
  size_t at = referee.out.find(marker);
  ASSERT_NE(at, std::string::npos) << referee.out;
  std::string ld_path = referee.out.substr(at + marker.size());
  ld_path = ld_path.substr(0, ld_path.find(" (0x"));
  std::string expected = fs::path(ld_path).lexically_normal().string();

  CommandResult r = why("libcorelib.so.2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    " + site + "/corelib/lib/libcorelib.so.2  (corelib 2.1)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    " + consumer + "  (userlib 0.3)\n      => " + expected + "  [RUNPATH"), std::string::npos)
      << r.out;
}

// --json says the same as data (why.schema.json), as the MCP tool `why` returns it.
TEST_F(WhyTest, JsonSaysTheSameAsTheText) {
  CommandResult r = run(quote(envdoctor()) + " why --json --python " + quote(venv_->python()) + " libcorelib.so.2");
  ASSERT_EQ(r.status, 0) << r.err;
  expect_schema_valid("why", r.out);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::string site = venv_->site();
  EXPECT_EQ(doc["name"], "libcorelib.so.2");
  EXPECT_EQ(doc["will_not_load"], false);
  EXPECT_TRUE(doc["package"].is_null());
  ASSERT_EQ(doc["library"]["copies"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["library"]["copies"][0]["path"], site + "/corelib/lib/libcorelib.so.2");
  EXPECT_EQ(doc["library"]["copies"][0]["owner"], "corelib 2.1");
  ASSERT_EQ(doc["library"]["needed_by"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["library"]["needed_by"][0]["consumer"]["owner"], "userlib 0.3");
  EXPECT_EQ(doc["library"]["needed_by"][0]["edge"]["rule"], "RUNPATH");
}

TEST_F(WhyTest, APackageListsWhatUsesIt) {
  CommandResult r = why("corelib");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string site = venv_->site();
  EXPECT_EQ(r.out.rfind("corelib 2.1  (", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  used by:\n    userlib 0.3\n      " + site + "/userlib/_use" + suffix_ +
                       " needs libcorelib.so.2 => " + site + "/corelib/lib/libcorelib.so.2\n"),
            std::string::npos)
      << r.out;
}

TEST_F(WhyTest, AnUnknownNameIsAnError) {
  CommandResult r = why("libnothing-here.so.7");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no package, library or file of that name"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace envdoctor::test
