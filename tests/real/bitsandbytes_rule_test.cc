// bitsandbytes' own load of its native library (data/package_loads.json, rule bitsandbytes-0.50)
// held to the real package: torch 2.11.0 (CUDA 13.0) and bitsandbytes 0.50.2 from the corpus, in a
// venv the pinned uv builds offline. The referee is the real `import bitsandbytes`: which
// libbitsandbytes_*.so it maps (/proc/self/maps), the class of the library object it keeps, what it
// says on stderr, and what its first native call raises.
//
// bitsandbytes chooses by torch.cuda.is_available(). envdoctor has no such view: it knows the
// node's GPUs (--gpu, --node, this machine's detection), and its rule takes the CPU library where
// the node has no GPU and no driver, the CUDA build where it has a GPU, and says nothing otherwise.
// This machine has no GPU, so the no-GPU case is real here (skipped on a machine with a driver).
// The GPU cases FAKE a GPU in the referee: torch.cuda.is_available, device_count,
// get_device_capability and device are patched before `import bitsandbytes`, so that its selection
// runs as on a GPU node; the choice of file, the dlopen and every word are bitsandbytes' own. Then
// envdoctor is told of the GPU with --gpu sm_90.
#include <algorithm>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// The referee: import bitsandbytes (with FAKE_GPU set, after patching torch.cuda), then print one
// JSON line: the backend, the library object's class, the bitsandbytes libraries mapped, and the
// first line of what a native call raises (null where none raises, or the call is not reached).
const std::string kProbe = R"(import json, os
if os.environ.get("FAKE_GPU"):
    import torch
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.get_device_capability = lambda *a: (9, 0)
    torch.cuda.device = lambda i: i
import bitsandbytes as b
lib = b.cextension.lib
maps = sorted({os.path.basename(l.split()[-1]) for l in open("/proc/self/maps") if "libbitsandbytes" in l})
first = None
try:
    lib.cquantize_blockwise_fp32(None)
except RuntimeError as e:
    first = str(e).strip().splitlines()[0]
except Exception:
    pass
print(json.dumps({"backend": b.cextension.BNB_BACKEND, "lib": type(lib).__name__, "mapped": maps, "first": first}))
)";

struct Referee {
  json result;
  std::string load_error;  // the line bitsandbytes logs, "" where it logs none
  std::string err;         // all of stderr
};

class BitsandbytesRule : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    uv_ = pinned_tool("uv", &why);
    if (uv_.empty() || corpus_wheel("torch", &why).empty() || corpus_wheel("bitsandbytes", &why).empty())
      GTEST_SKIP() << why;
    std::string dir = tmp_ / "venv", cache = "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " ";
    ASSERT_EQ(run(cache + quote(uv_) + " venv -q -p python3 " + quote(dir)).status, 0);
    CommandResult r =
        run(cache + quote(uv_) + " pip install -q --offline --no-index --find-links " + quote(corpus_dir()) +
            " --python " + quote(dir + "/bin/python") + " torch==2.11.0 bitsandbytes==0.50.2 numpy");
    ASSERT_EQ(r.status, 0) << r.err;
    venv_ = std::make_unique<Venv>(Venv::existing(dir));
    package_ = venv_->site() + "/bitsandbytes";
    probe_ = tmp_.write("probe.py", kProbe);
  }

  Referee referee(const std::string& variables) const {
    CommandResult r = run("cd / && env " + variables + " " + quote(venv_->python()) + " " + quote(probe_));
    EXPECT_EQ(r.status, 0) << r.err;
    Referee out;
    out.err = r.err;
    out.result = json::parse(r.out.substr(r.out.rfind('{')), nullptr, false);
    // Python's last-resort handler prints a logged error as its bare message.
    for (size_t at = 0; at < r.err.size();) {
      size_t end = r.err.find('\n', at);
      std::string line = r.err.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (line.rfind("bitsandbytes library load error: ", 0) == 0 && out.load_error.empty()) out.load_error = line;
      at = end == std::string::npos ? r.err.size() : end + 1;
    }
    return out;
  }

  // The own-load findings (runtime-library-missing, silent-fallback) about bitsandbytes.
  std::vector<json> check(const std::string& variables, const std::string& extra) const {
    CommandResult r = run("cd / && env " + variables + " " + quote(envdoctor()) + " check --json " + extra +
                          " --python " + quote(venv_->python()));
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);
    std::vector<json> out;
    for (const json& f : json::parse(r.out.empty() ? "{}" : r.out).value("findings", json::array()))
      if ((f["code"] == "silent-fallback" || f["code"] == "runtime-library-missing") && f["package"] == "bitsandbytes")
        out.push_back(f);
    return out;
  }

  // A faked GPU node: the referee patched, envdoctor told.
  Referee gpu_referee(const std::string& variables = "") const { return referee("FAKE_GPU=1 " + variables); }
  std::vector<json> gpu_check(const std::string& variables = "") const {
    return check("X=1 " + variables, "--gpu sm_90");
  }

  // What the referee's log and envdoctor agree on: no finding where bitsandbytes logs nothing, and
  // one silent-fallback in its words where it logs its load error.
  void expect_agree(const Referee& real, const std::vector<json>& own, const std::string& file) const {
    if (real.load_error.empty()) {
      EXPECT_EQ(own, std::vector<json>{}) << real.err;
      return;
    }
    ASSERT_EQ(own.size(), 1u) << real.load_error;
    EXPECT_EQ(own[0]["code"], "silent-fallback");
    EXPECT_EQ(own[0]["severity"], "warning");
    EXPECT_EQ(own[0]["message"], real.load_error);
    EXPECT_EQ(own[0]["file"], file);
    std::string hint = own[0]["hint"];
    EXPECT_NE(hint.find("ErrorHandlerMockBNBNativeLibrary"), std::string::npos) << hint;
  }

  TempDir tmp_;
  std::string uv_, package_, probe_;
  std::unique_ptr<Venv> venv_;
};

// No GPU: the CPU library, and without it a stand-in, with not one word at import; the first
// native call raises.
TEST_F(BitsandbytesRule, WithoutAGpuTheCpuLibraryAndWithoutItAStandInThatSaysNothing) {
  if (fs::exists("/proc/driver/nvidia/version") || have_tool("nvidia-smi"))
    GTEST_SKIP() << "this machine has an NVIDIA driver: the no-GPU case cannot be observed here";
  Referee healthy = referee("X=1");
  ASSERT_FALSE(healthy.result.is_discarded()) << healthy.err;
  EXPECT_EQ(healthy.result["backend"], "CPU");
  EXPECT_EQ(healthy.result["lib"], "BNBNativeLibrary");
  EXPECT_EQ(healthy.result["mapped"], json({"libbitsandbytes_cpu.so"}));
  EXPECT_EQ(check("X=1", ""), std::vector<json>{});

  std::string lib = package_ + "/libbitsandbytes_cpu.so";
  ASSERT_TRUE(fs::remove(lib));
  Referee broken = referee("X=1");
  ASSERT_FALSE(broken.result.is_discarded()) << broken.err;
  EXPECT_EQ(broken.result["lib"], "ErrorHandlerMockBNBNativeLibrary");
  EXPECT_EQ(broken.result["mapped"], json::array());
  EXPECT_EQ(broken.result["first"],
            "Attempted to use bitsandbytes native library functionality but it's not available.");
  EXPECT_EQ(broken.err.find("libbitsandbytes"), std::string::npos) << "bitsandbytes said something: " << broken.err;
  EXPECT_EQ(broken.load_error, "");

  std::vector<json> own = check("X=1", "");
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0]["code"], "silent-fallback");
  EXPECT_EQ(own[0]["severity"], "warning");
  EXPECT_EQ(own[0]["library"], "libbitsandbytes_cpu.so");
  EXPECT_EQ(own[0]["file"], lib);
  EXPECT_EQ(own[0]["message"], "") << "bitsandbytes says nothing at import on a CPU node";
  std::string hint = own[0]["hint"];
  EXPECT_NE(hint.find("Attempted to use bitsandbytes native library functionality but it's not available."),
            std::string::npos)
      << hint;
  // A driver but no GPU listed: envdoctor cannot tell whether torch sees one, and gives no verdict.
  EXPECT_EQ(check("X=1", "--driver 580.65.06"), std::vector<json>{});
  // Told of a GPU, envdoctor no longer judges the CPU library: bitsandbytes opens its CUDA build
  // there, and the faked referee does so with the CPU library gone.
  Referee gpu = gpu_referee();
  EXPECT_EQ(gpu.result["mapped"], json({"libbitsandbytes_cuda130.so"})) << gpu.err;
  EXPECT_EQ(gpu_check(), std::vector<json>{});
}

// GPU FAKED: the build of torch's CUDA 13.0, else the nearest of its major; with none of its
// major, bitsandbytes logs its load error and installs a stand-in.
TEST_F(BitsandbytesRule, WithAFakedGpuTheBuildOfTorchsCudaThenTheNearestOfItsMajor) {
  Referee healthy = gpu_referee();
  ASSERT_FALSE(healthy.result.is_discarded()) << healthy.err;
  EXPECT_EQ(healthy.result["backend"], "CUDA");
  EXPECT_EQ(healthy.result["lib"], "CudaBNBNativeLibrary");
  EXPECT_EQ(healthy.result["mapped"], json({"libbitsandbytes_cuda130.so"}));
  expect_agree(healthy, gpu_check(), "");

  ASSERT_TRUE(fs::remove(package_ + "/libbitsandbytes_cuda130.so"));
  Referee nearest = gpu_referee();
  EXPECT_EQ(nearest.result["mapped"], json({"libbitsandbytes_cuda132.so"})) << nearest.err;
  EXPECT_NE(nearest.err.find("No prebuilt binary for CUDA 13.0, loading CUDA 13.2 instead."), std::string::npos)
      << nearest.err;
  expect_agree(nearest, gpu_check(), "");

  ASSERT_TRUE(fs::remove(package_ + "/libbitsandbytes_cuda132.so"));
  Referee none = gpu_referee();
  EXPECT_EQ(none.result["lib"], "ErrorHandlerMockBNBNativeLibrary");
  EXPECT_EQ(none.result["mapped"], json::array());
  EXPECT_EQ(none.load_error, "bitsandbytes library load error: No compatible CUDA binary found at " + package_ +
                                 "/libbitsandbytes_cuda130.so");
  expect_agree(none, gpu_check(), package_ + "/libbitsandbytes_cuda130.so");
}

// GPU FAKED, BNB_CUDA_VERSION set: the build it names and no other. A CUDA 12 build in this CUDA 13
// environment cannot find libcudart.so.12; a build that is not there is named in the error; a value
// that is not digits (an empty one included) bitsandbytes refuses in words the rule does not give,
// and envdoctor says nothing of it.
TEST_F(BitsandbytesRule, WithAFakedGpuBnbCudaVersionNamesTheOneBuild) {
  Referee cuda12 = gpu_referee("BNB_CUDA_VERSION=124");
  EXPECT_EQ(cuda12.result["lib"], "ErrorHandlerMockBNBNativeLibrary") << cuda12.err;
  expect_agree(cuda12, gpu_check("BNB_CUDA_VERSION=124"), package_ + "/libbitsandbytes_cuda124.so");

  Referee absent = gpu_referee("BNB_CUDA_VERSION=999");
  EXPECT_EQ(absent.load_error, "bitsandbytes library load error: No compatible CUDA binary found at " + package_ +
                                   "/libbitsandbytes_cuda999.so");
  expect_agree(absent, gpu_check("BNB_CUDA_VERSION=999"), package_ + "/cextension.py");

  Referee dotted = gpu_referee("BNB_CUDA_VERSION=12.4");
  EXPECT_EQ(
      dotted.load_error,
      "bitsandbytes library load error: BNB_CUDA_VERSION='12.4': value must be digits only (e.g. '124' for 12.4).");
  EXPECT_EQ(gpu_check("BNB_CUDA_VERSION=12.4"), std::vector<json>{}) << "no verdict on a value bitsandbytes refuses";
  // Set and empty is refused too (`is not None`), not taken for unset.
  Referee empty = gpu_referee("BNB_CUDA_VERSION=");
  EXPECT_EQ(empty.load_error,
            "bitsandbytes library load error: BNB_CUDA_VERSION='': value must be digits only (e.g. '124' for 12.4).");
  EXPECT_EQ(gpu_check("BNB_CUDA_VERSION="), std::vector<json>{}) << "no verdict on a value bitsandbytes refuses";
  // Not taken for unset either, which would judge the automatic choice: with no CUDA 13 build left,
  // the automatic choice falls back, and the empty value still gets no verdict.
  ASSERT_TRUE(fs::remove(package_ + "/libbitsandbytes_cuda130.so"));
  ASSERT_TRUE(fs::remove(package_ + "/libbitsandbytes_cuda132.so"));
  EXPECT_EQ(gpu_check().size(), 1u);
  EXPECT_EQ(gpu_check("BNB_CUDA_VERSION="), std::vector<json>{});
}

}  // namespace
}  // namespace envdoctor::test
