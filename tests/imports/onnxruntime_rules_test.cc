// ONNX Runtime's own loads (data/package_loads.json, the rules onnxruntime-gpu-1.31-*), held to the
// real onnxruntime-gpu 1.31.1 of the corpus (a CUDA 13 build), installed by pip offline into real
// venvs: its extension module opens capi/libonnxruntime_providers_shared.so at import, and a session
// created with CUDAExecutionProvider opens capi/libonnxruntime_providers_cuda.so, which has no RUNPATH.
// Where that does not load, ONNX Runtime logs the loader's words and runs the session on the CPU:
// no exception, exit status 0.
//
// The referee is the real session on the wheel's own model (onnxruntime/datasets/mul_1.onnx), its
// stderr (ONNX Runtime's log) and get_providers(), against `envdoctor check --json`: one
// silent-fallback warning in ONNX Runtime's own words where it falls back, none where the provider
// loads. The system's CUDA toolkit (in ld.so.cache here) is hidden from both alike, each run in a
// mount namespace with a tmpfs over the directories that hold its copies of the libraries the
// provider needs: ld.so.cache still names them, and the loader, real or modelled, finds no file there.
#include <filesystem>
#include <set>

#include "fixtures/referees.h"
#include "fixtures/schema.h"
#include "fixtures/shared_fixture.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// The notes' referee: CUDAExecutionProvider asked for, what the session got, and a run.
const char* const kReferee = R"(
import os
import onnxruntime as ort
print("available:", ort.get_available_providers(), flush=True)
m = os.path.join(os.path.dirname(ort.__file__), "datasets", "mul_1.onnx")
s = ort.InferenceSession(m, providers=["CUDAExecutionProvider"])
print("session providers:", s.get_providers(), flush=True)
import numpy as np
print("run:", s.run(None, {"X": np.ones((3, 2), np.float32)})[0].tolist(), flush=True)
)";

const std::string kOnCpu = "session providers: ['CPUExecutionProvider']";
const std::string kProviderLog = "Failed to load library ";

// The directories of the system's copies of the libraries the provider needs, as ld.so.cache names
// them (links followed): hidden in each run. "" with `why` where one is a system directory, which
// cannot be hidden without hiding the C library.
std::vector<std::string> system_copies(std::string* why) {
  std::set<std::string> dirs;
  const std::set<std::string> needed = {"libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13"};
  std::string cache = run("/sbin/ldconfig -p").out;
  for (size_t at = 0; at < cache.size();) {
    size_t end = cache.find('\n', at);
    std::string line = cache.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? cache.size() : end + 1;
    size_t arrow = line.find(" => ");
    size_t name = line.find_first_not_of(" \t");
    if (arrow == std::string::npos || name == std::string::npos) continue;
    if (!needed.count(line.substr(name, line.find_first_of(" \t", name) - name))) continue;
    std::error_code ec;
    fs::path real = fs::canonical(line.substr(arrow + 4), ec);
    if (ec) continue;
    std::string dir = real.parent_path().string();
    for (const char* system : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"})
      if (dir == system || dir.rfind(std::string(system) + "/", 0) == 0) {
        *why = "the system's " + real.string() + " cannot be hidden from the loader";
        return {};
      }
    dirs.insert(dir);
  }
  return {dirs.begin(), dirs.end()};
}

// Why these tests cannot run here, or "".
std::string unavailable() {
  std::string why;
  if (!python3_facts().pip) return "needs python3 with pip";
  if (python3_facts().ext_suffix.find("cpython-311") == std::string::npos)
    return "needs python3 3.11: the corpus has onnxruntime-gpu 1.31.1 for cp311 only";
  for (const char* wheel : {"onnxruntime-gpu", "nvidia-cublas", "nvidia-cuda-runtime", "nvidia-curand"})
    if (corpus_wheel(wheel, &why).empty()) return why;
  if (run("unshare -m true").status != 0) return "needs unshare -m (a mount namespace) to hide the system's CUDA";
  system_copies(&why);
  return why;
}

// `command` (shell words) run with the system's copies hidden.
std::string hidden(const std::string& command) {
  std::string why, mounts;
  for (const std::string& dir : system_copies(&why)) mounts += "mount -t tmpfs none " + quote(dir) + " && ";
  return "unshare -m sh -c " + quote(mounts + "exec \"$@\"") + " sh " + command;
}

// A venv of the corpus by pip, offline: "" with `why` where the install fails.
std::string pip_venv(const std::string& venv, const std::string& requirement, std::string* why) {
  for (const std::string& command : {"python3 -m venv --without-pip " + quote(venv),
                                     "python3 -m pip --python " + quote(venv + "/bin/python") +
                                         " install -q --no-index --disable-pip-version-check --find-links " +
                                         quote(corpus_dir()) + " " + quote(requirement)}) {
    CommandResult r = run(command);
    if (r.status != 0) {
      *why = command + ": " + r.err;
      return "";
    }
  }
  return venv;
}

// The venv of `requirement`, built once a ctest run; never changed (a test copies it first).
std::string shared_venv(const std::string& name, const std::string& requirement, std::string* why) {
  static std::map<std::string, SharedFixture> kept;
  auto found = kept.find(name);
  if (found == kept.end())
    found = kept.emplace(name, shared_fixture(name,
                                              [&](const TempDir& dir) {
                                                std::string error;
                                                std::string venv = pip_venv(dir / "venv", requirement, &error);
                                                return venv.empty() ? "error: " + error : venv;
                                              }))
                .first;
  const std::string& record = found->second.record;
  if (record.rfind("error: ", 0) == 0) {
    *why = record;
    return "";
  }
  return record;
}

std::string bare_venv(std::string* why) { return shared_venv("ort-bare", "onnxruntime-gpu==1.31.1", why); }
// With the CUDA 13 wheels the provider needs (cuBLAS comes only with the cudnn extra).
std::string wheels_venv(std::string* why) {
  return shared_venv("ort-cuda13", "onnxruntime-gpu[cuda,cudnn]==1.31.1", why);
}

std::string site(const std::string& venv) { return venv + "/lib/python3.11/site-packages"; }
std::string capi(const std::string& venv) { return site(venv) + "/onnxruntime/capi"; }

// The referee, with `ld_library_path` ("" for none) and the system's copies hidden.
CommandResult session(const std::string& venv, const std::string& ld_library_path) {
  std::string variables = ld_library_path.empty() ? "" : " LD_LIBRARY_PATH=" + quote(ld_library_path);
  return run("cd / && " + hidden("env -u LD_LIBRARY_PATH" + variables + " " + quote(venv + "/bin/python") + " -c " +
                                 quote(kReferee)));
}

// `envdoctor check --json` with the same view and the same LD_LIBRARY_PATH, its output held to its
// schema.
json check(const std::string& venv, const std::string& ld_library_path, int* status) {
  std::string option = ld_library_path.empty() ? "" : " --ld-library-path " + quote(ld_library_path);
  CommandResult r = run(hidden("env -u LD_LIBRARY_PATH " + quote(envdoctor()) + " check --json --python " +
                               quote(venv + "/bin/python") + option));
  *status = r.status;
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  if (!r.out.empty()) expect_schema_valid("check", r.out);
  return json::parse(r.out.empty() ? "{}" : r.out);
}

// What the referee and check agree on, whatever the case: the session runs (exit 0) and lists
// CUDAExecutionProvider as available; where ONNX Runtime logs a load that failed, check has exactly
// one silent-fallback, a warning about onnxruntime-gpu, whose message is in that log, the session
// is on the CPU, and no load of onnxruntime-gpu is an error; where it logs none, check has none.
std::vector<json> expect_agree(const CommandResult& real, const json& report) {
  EXPECT_EQ(real.status, 0) << real.out << real.err;
  EXPECT_NE(real.out.find("'CUDAExecutionProvider'"), std::string::npos) << real.out;
  std::vector<json> fallbacks = findings(report, "silent-fallback");
  bool fell_back = real.err.find(kProviderLog) != std::string::npos ||
                   real.err.find("Init provider bridge failed.") != std::string::npos;
  if (!fell_back) {
    EXPECT_TRUE(fallbacks.empty()) << "the provider loads, yet: " << report["findings"].dump(1) << "\n" << real.err;
    return fallbacks;
  }
  EXPECT_NE(real.out.find(kOnCpu), std::string::npos) << real.out;
  EXPECT_EQ(fallbacks.size(), 1u) << report["findings"].dump(1) << "\nthe referee:\n" << real.err;
  for (const json& f : fallbacks) {
    EXPECT_EQ(f["severity"], "warning");
    EXPECT_EQ(f["package"], "onnxruntime-gpu");
    EXPECT_NE(real.err.find(f["message"].get<std::string>()), std::string::npos)
        << "check says: " << f["message"] << "\nONNX Runtime logs:\n"
        << real.err;
  }
  // A file its RECORD lists that is missing is an error of its own (record-missing-file); no load is.
  for (const json& f : report["findings"])
    if (f["severity"] == "error" && f["code"] != "record-missing-file") {
      EXPECT_NE(f.value("package", ""), "onnxruntime-gpu") << "an error where the session runs: " << f.dump(1);
    }
  return fallbacks;
}

// The referee and check on one venv with one LD_LIBRARY_PATH, held to what they agree on.
struct Both {
  CommandResult real;
  json report;
  int status = -1;
  std::vector<json> fallbacks;
};
Both both(const std::string& venv, const std::string& ld_library_path) {
  Both out;
  out.real = session(venv, ld_library_path);
  out.report = check(venv, ld_library_path, &out.status);
  out.fallbacks = expect_agree(out.real, out.report);
  return out;
}

class OnnxRuntimeRules : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

// No CUDA wheel: the provider misses libcublasLt.so.13 (the first of its NEEDED entries ld.so does
// not find), and the fix names the wheels data/sonames.json gives for each name and the directory
// they install into, which the provider's search reaches only through LD_LIBRARY_PATH.
TEST_F(OnnxRuntimeRules, WithoutCudaWheelsTheSessionRunsOnTheCpu) {
  std::string why, venv = bare_venv(&why);
  ASSERT_FALSE(venv.empty()) << why;
  auto [real, report, status, fallbacks] = both(venv, "");
  ASSERT_EQ(fallbacks.size(), 1u);
  const json& f = fallbacks.front();
  std::string provider = capi(venv) + "/libonnxruntime_providers_cuda.so";
  EXPECT_EQ(f["message"],
            "Failed to load library " + provider +
                " with error: libcublasLt.so.13: cannot open shared object file: No such file or directory");
  EXPECT_EQ(f["file"], provider);
  EXPECT_EQ(f["library"], "libonnxruntime_providers_cuda.so");
  std::string hint = f["hint"];
  EXPECT_NE(hint.find("runs on the CPU"), std::string::npos) << hint;
  EXPECT_NE(hint.find("needs libcublasLt.so.13, libcublas.so.13, libcurand.so.10, libcudart.so.13"), std::string::npos)
      << hint;
  EXPECT_NE(hint.find("install nvidia-cublas, nvidia-curand and nvidia-cuda-runtime, which ship them, and put " +
                      site(venv) + "/nvidia/cu13/lib on LD_LIBRARY_PATH"),
            std::string::npos)
      << hint;
  EXPECT_EQ(status, 0) << "warnings only: " << report["findings"].dump(1);
  EXPECT_TRUE(findings(report, "runtime-library-missing").empty()) << report["findings"].dump(1);
}

// The wheels installed, and still the provider misses libcublasLt.so.13: nothing searches
// nvidia/cu13/lib for a library without RUNPATH. The hint says where the copies are and that
// LD_LIBRARY_PATH reaches them; the next test shows it does.
TEST_F(OnnxRuntimeRules, WheelsThatTheProviderCannotReach) {
  std::string why, venv = wheels_venv(&why);
  ASSERT_FALSE(venv.empty()) << why;
  auto [real, report, status, fallbacks] = both(venv, "");
  ASSERT_EQ(fallbacks.size(), 1u);
  const json& f = fallbacks.front();
  EXPECT_EQ(f["message"], "Failed to load library " + capi(venv) +
                              "/libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared "
                              "object file: No such file or directory");
  std::string hint = f["hint"], lib = site(venv) + "/nvidia/cu13/lib";
  EXPECT_NE(hint.find("the environment has copies in " + lib +
                      " (nvidia-cublas 13.1.0.3, nvidia-curand 10.4.0.35 and "
                      "nvidia-cuda-runtime 13.0.96); put " +
                      lib + " on LD_LIBRARY_PATH"),
            std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("install "), std::string::npos) << "nothing to install: " << hint;
}

// LD_LIBRARY_PATH as the hint says, and the driver's library the toolkit's stub stands in for: the
// provider loads, and CUDA itself stops at the stub ("CUDA driver is a stub library"), as far as the
// GPU path goes without a GPU. No finding. Without the stub, the next miss is the driver's
// libcuda.so.1, which both say alike.
TEST_F(OnnxRuntimeRules, LdLibraryPathReachesTheWheelsAndTheProviderLoads) {
  const std::string stub_file = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(stub_file)) GTEST_SKIP() << "needs the CUDA toolkit's stub " << stub_file;
  std::string why, venv = wheels_venv(&why);
  ASSERT_FALSE(venv.empty()) << why;
  TempDir tmp;
  fs::create_directories(tmp / "stub");
  fs::copy_file(stub_file, tmp / "stub/libcuda.so.1");  // a copy: the toolkit is hidden
  std::string lib = site(venv) + "/nvidia/cu13/lib";

  Both loads = both(venv, lib + ":" + (tmp / "stub"));
  EXPECT_EQ(loads.real.err.find(kProviderLog), std::string::npos) << loads.real.err;
  EXPECT_NE(loads.real.out.find("CUDA driver is a stub library"), std::string::npos)
      << loads.real.out << loads.real.err;
  EXPECT_TRUE(loads.fallbacks.empty()) << loads.report["findings"].dump(1);
  EXPECT_EQ(loads.status, 0) << loads.report["findings"].dump(1);

  // Without the stub, the next miss is the driver's libcuda.so.1: the real session falls back on
  // this machine, which has no driver. envdoctor judges the environment, not this machine: the
  // driver brings libcuda.so.1 wherever there is a GPU, so it is a note (as for every file that
  // needs it, in the text report), and no finding.
  CommandResult real = session(venv, lib);
  if (real.err.find("with error: libcuda.so.1: cannot open shared object file") == std::string::npos)
    GTEST_SKIP() << "this machine has a driver's libcuda.so.1: " << real.err;
  int status = -1;
  json report = check(venv, lib, &status);
  EXPECT_TRUE(findings(report, "silent-fallback").empty()) << report["findings"].dump(1);
  EXPECT_EQ(status, 0) << report["findings"].dump(1);
}

// A copy of the shared venv (hard links: removing a file unlinks it here only) without `file`.
std::string without(const TempDir& tmp, const std::string& venv, const std::string& file) {
  std::string copy = tmp / "venv";
  EXPECT_EQ(run("cp -al " + quote(venv) + " " + quote(copy)).status, 0);
  fs::remove(capi(copy) + "/" + file);
  return copy;
}

// The provider library itself missing: ONNX Runtime's words name the path it opens; RECORD lists it.
TEST_F(OnnxRuntimeRules, ProviderLibraryRemoved) {
  std::string why, shared = bare_venv(&why);
  ASSERT_FALSE(shared.empty()) << why;
  TempDir tmp;
  std::string venv = without(tmp, shared, "libonnxruntime_providers_cuda.so");
  std::string provider = capi(venv) + "/libonnxruntime_providers_cuda.so";
  auto [real, report, status, fallbacks] = both(venv, "");
  ASSERT_EQ(fallbacks.size(), 1u);
  EXPECT_EQ(fallbacks.front()["message"], "Failed to load library " + provider + " with error: " + provider +
                                              ": cannot open shared object file: No such file or directory");
  EXPECT_EQ(fallbacks.front()["file"], provider);
  std::string hint = fallbacks.front()["hint"];
  EXPECT_NE(hint.find("RECORD lists onnxruntime/capi/libonnxruntime_providers_cuda.so, but the file is missing: "
                      "reinstall onnxruntime-gpu"),
            std::string::npos)
      << hint;
  EXPECT_EQ(findings(report, "record-missing-file").size(), 1u) << report["findings"].dump(1);
}

// The provider bridge missing: the import says so (a warning of ONNX Runtime's own), goes on, and
// every CUDA session falls back; check says it once, at the import.
TEST_F(OnnxRuntimeRules, ProviderBridgeRemoved) {
  std::string why, shared = bare_venv(&why);
  ASSERT_FALSE(shared.empty()) << why;
  TempDir tmp;
  std::string venv = without(tmp, shared, "libonnxruntime_providers_shared.so");
  auto [real, report, status, fallbacks] = both(venv, "");
  ASSERT_EQ(fallbacks.size(), 1u);
  EXPECT_NE(real.err.find("CreateOrtEnv] Init provider bridge failed."), std::string::npos) << real.err;
  EXPECT_EQ(fallbacks.front()["message"], "Init provider bridge failed.");
  EXPECT_EQ(fallbacks.front()["file"], capi(venv) + "/libonnxruntime_providers_shared.so");
  EXPECT_NE(fallbacks.front()["hint"].get<std::string>().find("runs on the CPU, for every CUDA session"),
            std::string::npos)
      << fallbacks.front()["hint"];
}

}  // namespace
}  // namespace envdoctor::test
