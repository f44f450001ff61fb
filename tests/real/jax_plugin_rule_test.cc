// The rules jax-cuda12-pjrt and jax-cuda13-pjrt of data/package_loads.json, held to the real JAX
// 0.10.2 (jax, jaxlib, jax-cuda12-plugin, jax-cuda13-plugin from the corpus) in venvs made by the
// real uv, offline. The referee is the real first use: `import jax; jax.devices()`. At that moment
// each PJRT plugin's initialize() preloads the CUDA wheels' libraries and checks that it can load
// CUDA, cuDNN, cuFFT, cuPTI, cuBLAS and cuSPARSE; where one does not load, JAX logs
//
//   Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()
//   Traceback (most recent call last): ...
//   RuntimeError: Unable to load cuDNN. Is it installed?
//
// and runs on the CPU, exit status 0: envdoctor must give exactly one silent-fallback warning per
// plugin that logged one, with that last line as its message, on the plugin's __init__.py, and the
// environment must still pass (status 0).
//
// This machine's CUDA toolkit is in ld.so.cache, where it would stand in for every library the
// scenarios take away; the referee and envdoctor both run in a mount namespace of their own where
// the directories ld.so.cache names for those libraries are empty (the cache still names them; the
// files are gone), as on a node whose CUDA comes from the wheels only. No machine here has a GPU:
// the toolkit's stub driver, copied as libcuda.so.1 onto LD_LIBRARY_PATH, lets the version check
// reach its last step, cuInit, which fails with CUDA_ERROR_STUB_LIBRARY (34) after every library
// loaded: the furthest the GPU path goes without a GPU, and what the healthy venv is held to.
#include <regex>
#include <sstream>

#include "fixtures/referees.h"
#include "fixtures/shared_fixture.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::vector<std::string> kJax = {"jax==0.10.2", "jaxlib==0.10.2"};
// What the version check of jax_cuda13_plugin opens, from NVIDIA's CUDA 13 wheels (the plugin's
// `with-cuda` extra has more: NCCL, NVSHMEM, NVRTC, cuSOLVER; each is only preloaded).
const std::vector<std::string> kCuda13Wheels = {"nvidia-cuda-runtime==13.0.96", "nvidia-cudnn-cu13==9.19.0.56",
                                                "nvidia-cufft==12.0.0.61",      "nvidia-cuda-cupti==13.0.85",
                                                "nvidia-cublas==13.1.0.3",      "nvidia-cusparse==12.6.3.3",
                                                "nvidia-nvjitlink==13.0.88"};
// The corpus's CUDA 12 wheels of the check: no nvidia-cufft-cu12, so cuFFT is what fails.
const std::vector<std::string> kCuda12Wheels = {"nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cudnn-cu12==9.19.0.56"};

// The sonames the version checks open: the directories of their ld.so.cache lines are hidden.
const char* const kChecked[] = {"libcudart.so", "libcudnn.so",  "libcufft.so",
                                "libcupti.so",  "libcublas.so", "libcusparse.so"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The pinned uv, with the tests' cache of the corpus's wheels.
std::string uv_command(const std::string& uv) {
  return "UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " " + quote(uv);
}

// `uv venv` and `uv pip install --offline` of `requirements` from the corpus at DIR/venv.
std::string build_jax_venv(const TempDir& dir, const std::string& uv, const std::vector<std::string>& requirements) {
  std::string venv = dir / "venv", reqs;
  for (const std::string& r : requirements) reqs += " " + quote(r);
  for (const std::string& command : {uv_command(uv) + " venv -q -p python3 " + quote(venv),
                                     uv_command(uv) + " pip install -q --offline --no-index --find-links " +
                                         quote(corpus_dir()) + " --python " + quote(venv + "/bin/python") + reqs}) {
    CommandResult r = run(command);
    if (r.status != 0) return "error: " + command + ": " + r.err;
  }
  return venv;
}

// A venv of `requirements` made by the real uv from the corpus, offline, once a ctest run; "" with
// `why` set where uv or a wheel is absent or the install fails.
std::string jax_venv(const std::string& name, const std::vector<std::string>& requirements, std::string* why) {
  std::string uv = pinned_tool("uv", why);
  if (uv.empty() || corpus_wheel("jax-cuda13-plugin", why).empty() || corpus_wheel("nvidia-cudnn-cu12", why).empty())
    return "";
  static std::map<std::string, SharedFixture> kept;
  auto found = kept.find(name);
  if (found == kept.end())
    found = kept.emplace(name, shared_fixture(
                                   name, [&](const TempDir& dir) { return build_jax_venv(dir, uv, requirements); }))
                .first;
  if (found->second.record.rfind("error: ", 0) == 0) {
    *why = found->second.record;
    return "";
  }
  return found->second.record;
}

// jax, jaxlib, both plugins (the corpus's "jax" venv of corpus_test.cc) and NVIDIA's CUDA 13 wheels.
std::string both_plugins_venv(std::string* why) {
  return jax_venv("jax-plugins-cu13",
                  concat(concat(kJax, {"jax-cuda12-plugin==0.10.2", "jax-cuda13-plugin==0.10.2"}), kCuda13Wheels), why);
}

// What one plugin's initialize() logged: the plugin's module and the last line of its traceback.
struct Logged {
  std::string module, last;
};

// The referee's plugin errors and envdoctor's silent-fallback findings on one venv.
struct Compared {
  std::vector<Logged> errors;
  std::vector<json> warned;
};

// The plugins' errors in the referee's stderr, in order.
std::vector<Logged> logged(const std::string& err) {
  static const std::regex header(
      "^Jax plugin configuration error: Exception when calling jax_plugins\\.(\\w+)\\.initialize\\(\\)$");
  static const std::regex error("^[\\w.]*(Error|Exception): ");
  std::vector<Logged> out;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, header)) out.push_back({m[1].str(), ""});
    else if (!out.empty() && std::regex_search(line, error)) out.back().last = line;
  }
  return out;
}

class JaxPluginRule : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run("unshare -m true").status != 0) GTEST_SKIP() << "needs unshare -m (root, mount namespaces)";
    std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (!fs::exists(stub)) GTEST_SKIP() << "needs the CUDA toolkit's stub driver " << stub;
    fs::create_directories(tmp_ / "stub");
    fs::copy_file(stub, tmp_ / "stub/libcuda.so.1");
    fs::create_directories(tmp_ / "empty");
    // The directories ld.so.cache names for the checked libraries, each hidden by an empty one.
    std::set<std::string> dirs;
    std::istringstream lines(run("ldconfig -p").out);
    for (std::string line; std::getline(lines, line);) {
      size_t arrow = line.find(" => ");
      if (arrow == std::string::npos) continue;
      for (const char* name : kChecked)
        if (line.find(std::string("\t") + name) == 0) dirs.insert(fs::path(line.substr(arrow + 4)).parent_path());
    }
    for (const std::string& d : dirs) {
      if (d == "/lib" || d == "/usr/lib" || d.rfind("/lib/", 0) == 0 || d.rfind("/usr/lib/", 0) == 0)
        GTEST_SKIP() << "the CUDA libraries of ld.so.cache are in a system directory (" << d
                     << "), which cannot be hidden without the C library";
      hide_ += "mount --bind " + quote(tmp_ / "empty") + " " + quote(d) + " && ";
    }
  }

  // `command` with the stub driver on LD_LIBRARY_PATH and `variables`, in a mount namespace
  // where the toolkit is hidden (`hidden`), or as it is.
  CommandResult on_node(const std::string& command, const std::string& variables, bool hidden) const {
    std::string env = "cd / && env LD_LIBRARY_PATH=" + quote(tmp_ / "stub") +
                      " PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 " + variables + " ";
    if (!hidden) return run(env + command);
    return run("unshare -m --propagation private sh -c " + quote(hide_ + env + command));
  }

  // A hard-linked copy of the shared venv `venv` with the distributions `removed` uninstalled by
  // uv (their RECORD followed: no file is left behind to be named missing).
  std::string copy(const std::string& venv, const std::vector<std::string>& removed) const {
    std::string dir = tmp_ / "venv";
    EXPECT_EQ(run("cp -al " + quote(venv) + " " + quote(dir)).status, 0);
    std::string why;
    for (const std::string& name : removed) {
      CommandResult r = run(uv_command(pinned_tool("uv", &why)) + " pip uninstall -q --python " +
                            quote(dir + "/bin/python") + " " + quote(name));
      EXPECT_EQ(r.status, 0) << r.err;
    }
    return dir;
  }

  // The referee's errors and envdoctor's silent-fallback findings on `venv`, held to each other:
  // each plugin that logged 'Unable to load X. Is it installed?' is one warning of its
  // distribution, on its __init__.py, with that line; the others none.
  Compared compare(const std::string& venv, const std::string& variables, bool hidden, bool passes = true) {
    CommandResult referee =
        on_node(quote(venv + "/bin/python") + " -c " + quote("import jax; print(jax.devices()[0].platform)"), variables,
                hidden);
    EXPECT_EQ(referee.status, 0) << referee.err;
    EXPECT_EQ(referee.out, "cpu\n") << referee.err;
    CommandResult checked =
        on_node(quote(envdoctor()) + " check --json --python " + quote(venv + "/bin/python"), variables, hidden);
    if (passes) {
      EXPECT_EQ(checked.status, 0) << checked.out << checked.err;  // a fallback is a warning
    }
    if (!checked.out.empty()) expect_schema_valid("check", checked.out);
    json report = json::parse(checked.out.empty() ? "{}" : checked.out);

    std::string site = Venv::existing(venv).site();
    std::set<std::tuple<std::string, std::string, std::string>> said, predicted;
    std::vector<Logged> errors = logged(referee.err);
    for (const Logged& l : errors) {
      if (l.last.rfind("RuntimeError: Unable to load ", 0) != 0) continue;
      // The distribution whose RECORD lists the plugin's module.
      std::string init = "jax_plugins/" + l.module + "/__init__.py";
      CommandResult owner = run("grep -l " + quote("^" + init + ",") + " " + quote(site) + "/*.dist-info/RECORD");
      std::string dist = fs::path(owner.out.substr(0, owner.out.find('\n'))).parent_path().filename().string();
      std::string name = dist.substr(0, dist.find('-'));
      std::replace(name.begin(), name.end(), '_', '-');
      said.insert({name, site + "/" + init, l.last});
    }
    for (const json& f : findings(report, "silent-fallback")) {
      EXPECT_EQ(f["severity"], "warning");
      predicted.insert({f.value("package", ""), f.value("file", ""), f.value("message", "")});
    }
    EXPECT_EQ(predicted, said) << "the referee said:\n" << referee.err;
    return {errors, findings(report, "silent-fallback")};
  }

  TempDir tmp_;
  std::string hide_;
};

// Both plugins, every library of the check from NVIDIA's CUDA 13 wheels: the check passes every
// library and stops at the stub driver's cuInit; no fallback is predicted.
TEST_F(JaxPluginRule, HealthyVenvReachesTheDriver) {
  std::string why, base = both_plugins_venv(&why);
  if (base.empty()) GTEST_SKIP() << why;
  Compared c = compare(copy(base, {}), "", true);
  EXPECT_TRUE(c.warned.empty());
  ASSERT_EQ(c.errors.size(), 2u);
  for (const Logged& l : c.errors)
    EXPECT_NE(l.last.find("operation cuInit(0) failed: Unknown CUDA error 34"), std::string::npos) << l.last;
}

struct Broken {
  std::string name;
  std::vector<std::string> removed;
  std::string variables;
  bool hidden;
  std::string library;  // what the warnings name; "" for none
  std::string last;     // in the last line of every plugin's error: JAX's words where it falls back
  size_t errors;        // how many plugins log an error
  // A file of the venv's site-packages copied into a directory put first on PYTHONPATH: the
  // preload takes nvidia/<module> from the first sys.path entry that has it.
  std::string on_pythonpath = "";
};

void PrintTo(const Broken& b, std::ostream* out) { *out << b.name; }

class JaxPluginBroken : public JaxPluginRule, public ::testing::WithParamInterface<Broken> {};

// A library of the check taken away: both plugins log it and run on the CPU (they share
// jax_cuda13_plugin's _versions), and envdoctor says so twice, in JAX's words.
TEST_P(JaxPluginBroken, EachPluginThatLogsIsOneWarning) {
  const Broken& b = GetParam();
  std::string why, base = both_plugins_venv(&why);
  if (base.empty()) GTEST_SKIP() << why;
  std::string variables = b.variables;
  if (!b.on_pythonpath.empty()) {
    fs::create_directories(fs::path(tmp_ / ("first/" + b.on_pythonpath)).parent_path());
    fs::copy_file(Venv::existing(base).site() + "/" + b.on_pythonpath, tmp_ / ("first/" + b.on_pythonpath));
    variables += " PYTHONPATH=" + quote(tmp_ / "first");
  }
  // With a PYTHONPATH entry, check also calls scipy.libs' libgfortran an error (missing-library:
  // its libquadmath not loaded first), a finding of the load checks, not of this rule: the status
  // is not held here.
  Compared c = compare(copy(base, b.removed), variables, b.hidden, b.on_pythonpath.empty());
  ASSERT_EQ(c.errors.size(), b.errors);
  for (const Logged& l : c.errors) EXPECT_NE(l.last.find(b.last), std::string::npos) << l.last;
  EXPECT_EQ(c.warned.size(), b.library.empty() ? 0u : 2u);
  for (const json& f : c.warned) EXPECT_EQ(f["library"], b.library);
}

INSTANTIATE_TEST_SUITE_P(
    Real, JaxPluginBroken,
    ::testing::Values(Broken{"NoCudart",
                             {"nvidia-cuda-runtime"},
                             "",
                             true,
                             "libcudart.so.13",
                             "RuntimeError: Unable to load CUDA. Is it installed?",
                             2},
                      Broken{"NoCudnn",
                             {"nvidia-cudnn-cu13"},
                             "",
                             true,
                             "libcudnn.so.9",
                             "RuntimeError: Unable to load cuDNN. Is it installed?",
                             2},
                      // The toolkit's libcudart.so.13, found by ld.so.cache, stands in: both checks reach the
                      // driver, and no fallback is predicted.
                      Broken{"NoCudartToolkitVisible", {"nvidia-cuda-runtime"}, "", false, "", "cuInit(0) failed", 2},
                      // No wheel's libcudart.so.13, but a copy in nvidia/cu13/lib of the first sys.path entry:
                      // the preload loads it by path, and the check's bare name finds it loaded.
                      Broken{"NoCudartButACopyFirstOnSysPath",
                             {"nvidia-cuda-runtime"},
                             "",
                             true,
                             "",
                             "cuInit(0) failed",
                             2,
                             "nvidia/cu13/lib/libcudart.so.13"},
                      // The check skipped: both plugins register (the second one's registration is the only
                      // error), and no fallback is logged or predicted.
                      Broken{"NoCudnnCheckSkipped",
                             {"nvidia-cudnn-cu13"},
                             "JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1",
                             true,
                             "",
                             "ALREADY_EXISTS: PJRT_Api already exists for device type cuda",
                             1}),
    [](const ::testing::TestParamInfo<Broken>& info) { return info.param.name; });

// jax-cuda12-plugin alone with the corpus's CUDA 12 wheels, which have no cuFFT: its check
// passes CUDA and cuDNN, then cannot load libcufft.so.11.
TEST_F(JaxPluginRule, Cuda12PluginWithoutCufft) {
  std::string why,
      base = jax_venv("jax-plugin-cu12", concat(concat(kJax, {"jax-cuda12-plugin==0.10.2"}), kCuda12Wheels), &why);
  if (base.empty()) GTEST_SKIP() << why;
  Compared c = compare(copy(base, {}), "", true);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0].module, "xla_cuda12");
  EXPECT_EQ(c.errors[0].last, "RuntimeError: Unable to load cuFFT. Is it installed?");
  ASSERT_EQ(c.warned.size(), 1u);
  EXPECT_EQ(c.warned[0]["library"], "libcufft.so.11");
}

}  // namespace
}  // namespace envdoctor::test
