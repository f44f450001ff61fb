// CuPy 14's own load of NVRTC (data/package_loads.json, rule cupy-14-nvrtc) held to the real
// package: cupy-cuda13x and cupy-cuda12x 14.2.0 with cuda-pathfinder 1.9.1 from the corpus,
// installed by the pinned uv into venvs of their own, offline. The referee is the real first use,
// `cupy.cuda.nvrtc.getVersion()` (NVRTC runs without a GPU; CuPy's own compile path asks for a
// device first, and the stub libcuda does not satisfy it), and cuda-pathfinder's own answer of
// where it found the copy (`found_via`).
//
// This machine's CUDA toolkit is in ld.so.cache, and cuda-pathfinder's system search would find its
// libnvrtc.so.13. Where a case must not see it, the referee and envdoctor both run in one private
// mount namespace with a tmpfs over each toolkit root that ld.so.cache names for libnvrtc (the
// cache still lists the files; they are gone, as on a node without the toolkit), and with
// CUDA_PATH, CUDA_HOME, CONDA_PREFIX and LD_LIBRARY_PATH unset, so that cuda-pathfinder's other
// places hold nothing but what a case puts there.
#include <algorithm>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::string kUnset = "env -u CUDA_PATH -u CUDA_HOME -u CONDA_PREFIX -u LD_LIBRARY_PATH ";

// The referee: NVRTC's first use, then where cuda-pathfinder found it (cached: no second search).
const std::string kFirstUse =
    "import cupy, cuda.pathfinder as p\n"
    "print('nvrtc version:', cupy.cuda.nvrtc.getVersion())\n"
    "d = p.load_nvidia_dynamic_lib('nvrtc'); print('loaded:', d.abs_path, 'found_via:', d.found_via)\n";

// The last line of `text` that is not empty: the exception a Python traceback ends with.
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(text.rfind('\n') + 1);
}

class CupyNvrtcRule : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    uv_ = pinned_tool("uv", &why);
    if (uv_.empty()) GTEST_SKIP() << why;
    for (const char* wheel : {"cupy-cuda13x", "cupy-cuda12x", "cuda-pathfinder", "nvidia-cuda-nvrtc",
                              "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12"})
      if (corpus_wheel(wheel, &why).empty()) GTEST_SKIP() << why;
    // The toolkit roots ld.so.cache names for libnvrtc: DIR/lib/libnvrtc.so.13 hides DIR.
    CommandResult cache = run("ldconfig -p");
    ASSERT_EQ(cache.status, 0) << cache.err;
    std::string text = cache.out;
    for (size_t at = text.find("=> "); at != std::string::npos; at = text.find("=> ", at + 1)) {
      std::string path = text.substr(at + 3, text.find('\n', at) - at - 3);
      if (fs::path(path).filename().string().rfind("libnvrtc.so.", 0) != 0) continue;
      fs::path dir = fs::weakly_canonical(fs::path(path)).parent_path();
      if (dir.filename() == "lib" || dir.filename() == "lib64") dir = dir.parent_path();
      if (std::find(toolkits_.begin(), toolkits_.end(), dir.string()) == toolkits_.end())
        toolkits_.push_back(dir.string());
      system_nvrtc_ = true;
    }
    if (!toolkits_.empty() && run("unshare -m true").status != 0)
      GTEST_SKIP() << "needs unshare -m (root, mount namespaces) to hide the CUDA toolkit in ld.so.cache";
  }

  // A venv of `requirements` by the pinned uv, from the corpus, offline.
  Venv venv(const std::string& requirements) const {
    std::string dir = tmp_ / "venv", cache = "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " ";
    EXPECT_EQ(run(cache + quote(uv_) + " venv -q -p python3 " + quote(dir)).status, 0);
    CommandResult r = run(cache + quote(uv_) + " pip install -q --offline --no-index --find-links " +
                          quote(corpus_dir()) + " --python " + quote(dir + "/bin/python") + " " + requirements);
    EXPECT_EQ(r.status, 0) << r.err;
    return Venv::existing(dir);
  }

  // `command` (a shell command line) without CUDA's variables; with `hide`, on a node without the
  // toolkit.
  CommandResult on_node(const std::string& command, bool hide) const {
    if (!hide || toolkits_.empty()) return run("cd / && " + kUnset + command);
    std::string mounts;
    for (const std::string& dir : toolkits_) mounts += "mount -t tmpfs none " + quote(dir) + " && ";
    return run("unshare -m sh -c " + quote(mounts + "cd / && " + kUnset + command));
  }

  CommandResult python(const Venv& v, const std::string& code, bool hide, const std::string& variables = "") const {
    return on_node((variables.empty() ? "" : "env " + variables + " ") + quote(v.python()) + " -c " + quote(code),
                   hide);
  }

  // `envdoctor check --json` in the same namespace and variables as the referee.
  json check(const Venv& v, bool hide, const std::string& variables = "") const {
    CommandResult r = on_node((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                                  " check --json --python " + quote(v.python()),
                              hide);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);
    return json::parse(r.out.empty() ? "{}" : r.out);
  }

  // The findings of a package's own load for `package` (either code).
  static std::vector<json> own_load_findings(const json& report, const std::string& package) {
    std::vector<json> out;
    for (const json& f : report["findings"])
      if ((f["code"] == "runtime-library-missing" || f["code"] == "silent-fallback") && f["package"] == package)
        out.push_back(f);
    return out;
  }

  TempDir tmp_;
  std::string uv_;
  std::vector<std::string> toolkits_;  // the toolkit roots to hide
  bool system_nvrtc_ = false;          // ld.so.cache names a libnvrtc
};

// No NVRTC anywhere: `import cupy` succeeds and the first use raises cuda-pathfinder's
// DynamicLibNotFoundError, word for word what envdoctor says, on the file that asks pathfinder.
// Then the wheel the finding names is installed, and NVRTC compiles from it, builtins and all.
TEST_F(CupyNvrtcRule, WithoutNvrtcTheFirstUseRaisesPathfindersErrorAndTheWheelItNamesCompiles) {
  Venv v = venv("cupy-cuda13x==14.2.0");
  if (HasFailure()) return;
  EXPECT_EQ(python(v, "import cupy", true).status, 0) << "import cupy must not load NVRTC";
  CommandResult first = python(v, kFirstUse, true);
  ASSERT_EQ(first.status, 1) << first.out << first.err;
  std::string raised = last_line(first.err);
  EXPECT_EQ(raised,
            "cuda.pathfinder._dynamic_libs.load_dl_common.DynamicLibNotFoundError: Failure finding "
            "\"libnvrtc.so.13 or libnvrtc.so.12\": No such file: libnvrtc.so.13 or libnvrtc.so.12, No such file: "
            "libnvrtc.so.13 or libnvrtc.so.12");

  json report = check(v, true);
  std::vector<json> own = own_load_findings(report, "cupy-cuda13x");
  ASSERT_EQ(own.size(), 1u) << report.dump(1);
  EXPECT_EQ(own[0]["code"], "runtime-library-missing");
  EXPECT_EQ(own[0]["severity"], "error");
  EXPECT_EQ(own[0]["file"], v.site() + "/cupy_backends/cuda/libs/__init__.py");
  EXPECT_EQ(own[0]["library"], "libnvrtc.so.13");
  EXPECT_EQ(own[0]["message"], raised);
  // The fix: NVIDIA's NVRTC wheel of CuPy's own CUDA major (13), offered as a command where one is.
  std::string hint = own[0]["hint"];
  EXPECT_NE(hint.find("nvidia-cuda-nvrtc"), std::string::npos) << hint;
  if (own[0].contains("fix_command")) {
    std::string fix = own[0]["fix_command"];
    EXPECT_TRUE(fix.ends_with(" nvidia-cuda-nvrtc")) << fix;
  }

  // The healthy case: that wheel installed (offline, from the corpus), and the real first use finds it in
  // site-packages' nvidia/cu13/lib, preloads its builtins there and compiles a kernel to PTX (as far as NVRTC goes
  // without a GPU).
  CommandResult installed = run("UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " " + quote(uv_) +
                                " pip install -q --offline --no-index --find-links " + quote(corpus_dir()) +
                                " --python " + quote(v.python()) + " nvidia-cuda-nvrtc==13.0.88");
  ASSERT_EQ(installed.status, 0) << installed.err;
  CommandResult compiled =
      python(v,
             kFirstUse +
                 "n = cupy.cuda.nvrtc\n"
                 "prog = n.createProgram('extern \"C\" __global__ void k(float* x) { x[0] = 1; }', "
                 "'k.cu', [], [])\n"
                 "n.compileProgram(prog, ['--gpu-architecture=compute_75'])\n"
                 "print('ptx:', len(n.getPTX(prog)) > 0)\n"
                 "print('builtins:', any('libnvrtc-builtins.so.13.0' in l for l in "
                 "open('/proc/self/maps')))\n",
             true);
  ASSERT_EQ(compiled.status, 0) << compiled.err;
  std::string lib = v.site() + "/nvidia/cu13/lib/libnvrtc.so.13";
  EXPECT_EQ(compiled.out,
            "nvrtc version: (13, 0)\nloaded: " + lib + " found_via: site-packages\nptx: True\nbuiltins: True\n");
  EXPECT_EQ(own_load_findings(check(v, true), "cupy-cuda13x"), std::vector<json>{});
}

// $CUDA_PATH is cuda-pathfinder's last place, after the system search: a root holding the
// toolkit's libnvrtc.so.13 serves the first use (found_via CUDA_PATH), and envdoctor, whose rule
// has the place, says nothing of CuPy's NVRTC. (A compile would then fail on NVRTC's builtins,
// which pathfinder does not preload from a toolkit whose libnvrtc.so.13 has no minor version in its
// name, and which NVRTC's own dlopen looks for in ld.so.cache: envdoctor's NVRTC rule judges the
// copies of the environment, not one outside it.)
TEST_F(CupyNvrtcRule, ACopyUnderCudaPathServesTheFirstUseAfterTheSystemSearch) {
  if (!system_nvrtc_) GTEST_SKIP() << "needs a CUDA toolkit's libnvrtc.so.13 in ld.so.cache to copy";
  Venv v = venv("cupy-cuda13x==14.2.0");
  if (HasFailure()) return;
  std::string root = tmp_ / "ctk";
  fs::create_directories(root + "/lib");
  CommandResult copied = run("cp -L \"$(ldconfig -p | sed -n 's/.*libnvrtc.so.13 .*=> //p' | head -1)\" " +
                             quote(root + "/lib/libnvrtc.so.13"));
  ASSERT_EQ(copied.status, 0) << copied.err;
  std::string variables = "CUDA_PATH=" + quote(root);
  CommandResult first = python(v, kFirstUse, true, variables);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("loaded: " + root + "/lib/libnvrtc.so.13 found_via: CUDA_PATH\n"), std::string::npos)
      << first.out;
  EXPECT_EQ(own_load_findings(check(v, true, variables), "cupy-cuda13x"), std::vector<json>{});
  // Without it, the same namespace: the error again.
  EXPECT_EQ(own_load_findings(check(v, true), "cupy-cuda13x").size(), 1u);
}

// cupy-cuda12x whose NVRTC 12 is gone, beside the system's CUDA 13 toolkit: cuda-pathfinder tries
// libnvrtc.so.13 first and CuPy for CUDA 12 compiles with NVRTC 13.0, without a word. Nothing
// raises, so the rule says nothing; what envdoctor says is the missing file (record-missing-file,
// whose fix restores NVRTC 12) and the two CUDA majors (cuda-major-mix, which names cupy-cuda12x
// as the user of CUDA 13).
TEST_F(CupyNvrtcRule, Cuda12CupyTakesTheSystemsNvrtc13Silently) {
  if (!system_nvrtc_) GTEST_SKIP() << "needs a CUDA 13 toolkit's libnvrtc.so.13 in ld.so.cache";
  Venv v = venv("cupy-cuda12x==14.2.0 nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvrtc-cu12==12.9.86");
  if (HasFailure()) return;
  std::string own = v.site() + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12";
  CommandResult before = python(v, kFirstUse, false);
  ASSERT_EQ(before.status, 0) << before.err;
  EXPECT_EQ(before.out, "nvrtc version: (12, 9)\nloaded: " + own + " found_via: site-packages\n");
  EXPECT_EQ(own_load_findings(check(v, false), "cupy-cuda12x"), std::vector<json>{});

  fs::remove(own);
  CommandResult after = python(v, kFirstUse, false);
  ASSERT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.out.substr(0, after.out.find('\n')), "nvrtc version: (13, 0)") << after.out;
  EXPECT_NE(after.out.find(" found_via: system-search\n"), std::string::npos) << after.out;

  json report = check(v, false);
  EXPECT_EQ(own_load_findings(report, "cupy-cuda12x"), std::vector<json>{}) << report.dump(1);
  std::vector<json> lost = findings(report, "record-missing-file");
  EXPECT_TRUE(std::any_of(lost.begin(), lost.end(), [&](const json& f) { return f["file"] == own; })) << report.dump(1);
  std::vector<json> mix = findings(report, "cuda-major-mix");
  EXPECT_TRUE(std::any_of(mix.begin(), mix.end(), [](const json& f) {
    return f["hint"].get<std::string>().find("CUDA 13 is used by cupy-cuda12x") != std::string::npos;
  })) << report.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
