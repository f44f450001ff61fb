// Triton's own search for the driver (data/package_loads.json, rule triton-3-libcuda-dirs-knobs)
// held to the real package: triton 3.6.0 from the corpus, installed by the pinned uv into a venv of
// its own, offline. The referee is the real libcuda_dirs() of triton/backends/nvidia/driver.py,
// which the first compile calls (a compile itself needs a GPU); the driver is the toolkit's stub
// libcuda.so copied as libcuda.so.1 into a directory of its own, which the loader finds through
// LD_LIBRARY_PATH.
//
// libcuda_dirs() reads `/sbin/ldconfig -p`, the machine's ld.so.cache. Each case makes a cache of
// its own (`ldconfig -C`, from the machine's configuration and the directories the case lists), and the referee and
// envdoctor both run in one private mount namespace with that cache bound over /etc/ld.so.cache, so that the machine's
// own cache is never changed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
const char* kSeparator = "--- envdoctor ---";  // between the referee's words (several lines) and the report

// The referee: the real search, its list or "AssertionError " and its message.
const std::string kSearch =
    "from triton.backends.nvidia.driver import libcuda_dirs\n"
    "try:\n    print(libcuda_dirs(), end='')\nexcept AssertionError as e:\n    print('AssertionError', e, end='')\n";

class TritonRule : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    std::string uv = pinned_tool("uv", &why);
    if (uv.empty()) GTEST_SKIP() << why;
    if (corpus_wheel("triton", &why).empty()) GTEST_SKIP() << why;
    if (!fs::exists(kStub)) GTEST_SKIP() << "needs the CUDA toolkit's stub " << kStub;
    if (!have_tool("ldconfig") || run("unshare -m true").status != 0)
      GTEST_SKIP() << "needs ldconfig and unshare -m (root, mount namespaces) to give the search a cache of its own";
    std::string dir = tmp_ / "venv", cache = "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " ";
    ASSERT_EQ(run(cache + quote(uv) + " venv -q -p python3 " + quote(dir)).status, 0);
    CommandResult r = run(cache + quote(uv) + " pip install -q --offline --no-index --find-links " +
                          quote(corpus_dir()) + " --python " + quote(dir + "/bin/python") + " triton==3.6.0");
    ASSERT_EQ(r.status, 0) << r.err;
    python_ = dir + "/bin/python";
    fs::create_directories(drv_);
    fs::copy_file(kStub, drv_ + "/libcuda.so.1");
  }

  // An ld.so.cache made from the machine's configuration and `dirs`.
  void make_cache(const std::vector<std::string>& dirs) {
    std::string conf = "include /etc/ld.so.conf.d/*.conf\n";
    for (const std::string& d : dirs) conf += d + "\n";
    std::string file = tmp_.write("ld.so.conf", conf);
    CommandResult r = run("ldconfig -X -C " + quote(cache_) + " -f " + quote(file));
    ASSERT_EQ(r.status, 0) << r.err;
  }

  // The real search and envdoctor's triton findings, in one namespace with the case's cache, with
  // `variables` set (LD_LIBRARY_PATH among them where the driver is to be found).
  std::pair<std::string, std::vector<json>> run_case(const std::string& variables) {
    std::string script = "mount --bind " + quote(cache_) + " /etc/ld.so.cache && " + quote(python_) + " -c " +
                         quote(kSearch) + " && echo && echo " + quote(kSeparator) + " && " + quote(envdoctor()) +
                         " check --json --python " + quote(python_);
    CommandResult r = run("cd / && env -u LD_LIBRARY_PATH -u TRITON_LIBCUDA_PATH " + variables + " unshare -m sh -c " +
                          quote(script));
    size_t at = r.out.find(std::string("\n") + kSeparator + "\n");
    EXPECT_NE(at, std::string::npos) << r.out << r.err;
    if (at == std::string::npos) return {};
    report_ = r.out.substr(at + 2 + std::string(kSeparator).size());
    const std::string& report = report_;
    expect_schema_valid("check", report);
    std::vector<json> found;
    json parsed = json::parse(report);
    for (const json& f : parsed["findings"])
      if (f["package"] == "triton" && f["code"] == "runtime-library-missing") found.push_back(f);
    return {r.out.substr(0, at), found};
  }

  TempDir tmp_;
  std::string report_;  // envdoctor's report of the last case, for the failures' messages
  std::string python_, drv_ = tmp_ / "drv", stale_ = tmp_ / "stale", cache_ = tmp_ / "ld.so.cache";
};

// The cache names a driver since removed; the loader finds the one on LD_LIBRARY_PATH, which the
// search does not look at while a line names one: the real assertion, in envdoctor's message to
// the letter. The hint's fixes, each applied: the variable, and the driver's directory cached.
TEST_F(TritonRule, AStaleCacheFailsTheFirstCompileInTritonsOwnWords) {
  fs::create_directories(stale_);
  fs::copy_file(kStub, stale_ + "/libcuda.so.1");
  make_cache({stale_});
  fs::remove(stale_ + "/libcuda.so.1");
  std::string llp = "LD_LIBRARY_PATH=" + quote(drv_);

  auto [said, found] = run_case(llp);
  EXPECT_EQ(said, "AssertionError libcuda.so cannot found!\nPossible files are located at ['" + stale_ +
                      "/libcuda.so.1'].Please create a symlink of libcuda.so to any of the files.");
  ASSERT_EQ(found.size(), 1u) << report_;
  EXPECT_EQ(found[0]["severity"], "error");
  EXPECT_EQ(found[0]["library"], "libcuda.so.1");
  EXPECT_EQ(found[0]["file"], fs::path(python_).parent_path().parent_path().string() +
                                  "/lib/python3.11/site-packages/triton/backends/nvidia/driver.py");
  EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), said);
  std::string hint = found[0]["hint"];
  EXPECT_NE(hint.find("ld.so.cache names " + stale_ + "/libcuda.so.1; the loader finds " + drv_ +
                      "/libcuda.so.1 (LD_LIBRARY_PATH): add " + drv_ +
                      ", where ldconfig does not look, to a file of /etc/ld.so.conf.d and run ldconfig as root, or "
                      "set TRITON_LIBCUDA_PATH=" +
                      drv_),
            std::string::npos)
      << hint;

  // The variable skips the search (read through triton/knobs.py): both say it works.
  std::tie(said, found) = run_case(llp + " TRITON_LIBCUDA_PATH=" + quote(drv_));
  EXPECT_EQ(said, "['" + drv_ + "']");
  EXPECT_TRUE(found.empty()) << report_;
  // Empty, it is false to Python: the search runs and fails as before, for both.
  std::tie(said, found) = run_case(llp + " TRITON_LIBCUDA_PATH=");
  EXPECT_EQ(said.rfind("AssertionError ", 0), 0u) << said;
  EXPECT_EQ(found.size(), 1u) << report_;

  // The driver's directory in the configuration, ldconfig run: both say it works.
  make_cache({drv_});
  std::tie(said, found) = run_case(llp);
  EXPECT_EQ(said, "['" + drv_ + "']");
  EXPECT_TRUE(found.empty()) << report_;
}

// No line of the cache names libcuda.so.1: the search takes LD_LIBRARY_PATH's directories that hold
// it, and both say it works. Without LD_LIBRARY_PATH the loader finds no driver at all: the real
// search fails in its other words, and envdoctor gives no verdict on Triton (the driver note's).
TEST_F(TritonRule, LdLibraryPathServesWhereTheCacheNamesNone) {
  make_cache({});
  auto [said, found] = run_case("LD_LIBRARY_PATH=" + quote(tmp_ / "empty") + ":" + quote(drv_));
  EXPECT_EQ(said, "['" + drv_ + "']");
  EXPECT_TRUE(found.empty()) << report_;

  std::tie(said, found) = run_case("");
  EXPECT_EQ(said,
            "AssertionError libcuda.so cannot found!\nPlease make sure GPU is set up and then run \"/sbin/ldconfig\" "
            "(requires sudo) to refresh the linker cache.");
  EXPECT_TRUE(found.empty()) << report_;
}

}  // namespace
}  // namespace envdoctor::test
