// torch's own loading, modelled release by release (docs/torch.md): torch/__init__.py opens
// lib/libtorch_global_deps.so with RTLD_GLOBAL, and opens CUDA wheels' libraries by path, either to
// recover from a failure that names one of them, or (from 2.6) after libcudart loaded. A library
// torch's extension needs with no RPATH to it loads when the preload opened it first.
//
// The package is a small torch built by the test: gcc libraries with the wheels' real names and
// layout, and an __init__.py that does what the release's does (the list, where it searches, when
// it preloads); the referee is a real `import torch`.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "fixtures/venv.h"
#include "imports/package_loads.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// One release's _load_global_deps, in Python, as docs/torch.md's row for it says.
struct Release {
  std::string version;
  std::string libraries;      // Python list of (folder, pattern, required)
  std::string search;         // nvidia | nvidia_then_folder | nvidia_or_folder | nvidia_cuda_or_folder
  std::string when;           // never | wheel_cudart | any_cudart
  std::string opportunistic;  // Python list, as `libraries`
  bool each_on_its_own = false;
};

std::string torch_init(const Release& r) {
  return "LIBS = " + r.libraries + "\nOPPORTUNISTIC = " + r.opportunistic + "\nSEARCH = '" + r.search + "'\nWHEN = '" +
         r.when + "'\nEACH = " + (r.each_on_its_own ? "True" : "False") + "\n" +
         R"(import ctypes, glob, os, sys
from . import version as _version

def _paths(p, folder, name):
    nvidia = os.path.join(p, "nvidia")
    if SEARCH in ("nvidia", "nvidia_then_folder") and not os.path.exists(nvidia):
        return []
    found = glob.glob(os.path.join(nvidia, folder, "lib", name))
    if SEARCH == "nvidia_cuda_or_folder" and _version.cuda:
        found += glob.glob(os.path.join(nvidia, "cu" + _version.cuda.split(".")[0], "lib", name))
    if SEARCH != "nvidia":
        found += glob.glob(os.path.join(p, folder, "lib", name))
    return found

def _preload(folder, name, required=True):
    for p in sys.path:
        found = _paths(p, folder, name)
        if found:
            ctypes.CDLL(found[0])
            return
    if required:
        raise ValueError(f"{name} not found in the system path {sys.path}")

def _load_global_deps():
    lib = os.path.join(os.path.dirname(__file__), "lib", "libtorch_global_deps.so")
    try:
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
        if WHEN == "never":
            return
        try:
            with open("/proc/self/maps") as f:
                maps = f.read()
            if ("nvidia/cuda_runtime/lib/libcudart.so" if WHEN == "wheel_cudart" else "libcudart.so") not in maps:
                return
            for folder, name, required in OPPORTUNISTIC:
                if EACH:
                    try:
                        _preload(folder, name, required)
                    except Exception:
                        pass
                else:
                    _preload(folder, name, required)
        except Exception:
            pass
    except OSError as err:
        if not any(name.split(".")[0] in err.args[0] for _, name, _ in LIBS):
            raise err
        for folder, name, required in LIBS:
            _preload(folder, name, required)
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)

_load_global_deps()
from torch._C import *
)";
}

// torch 2.0's list (docs/torch.md), and the later ones as far as these tests need them.
const char* kList20 =
    "[('cublas','libcublas.so.*[0-9]',True),('cudnn','libcudnn.so.*[0-9]',True),"
    "('cuda_nvrtc','libnvrtc.so.*[0-9]',True),('cuda_runtime','libcudart.so.*[0-9]',True),"
    "('cuda_cupti','libcupti.so.*[0-9]',True),('cufft','libcufft.so.*[0-9]',True),"
    "('curand','libcurand.so.*[0-9]',True),('cusolver','libcusolver.so.*[0-9]',True),"
    "('cusparse','libcusparse.so.*[0-9]',True),('nccl','libnccl.so.*[0-9]',True),"
    "('nvtx','libnvToolsExt.so.*[0-9]',True)]";
const char* kNvrtcNvjitlink = "[('cuda_nvrtc','libnvrtc.so.*[0-9]',True),('nvjitlink','libnvJitLink.so.*[0-9]',True)]";
// 2.10's list begins with cuBLAS, cuDNN, NVRTC and its builtins.
const char* kList210 =
    "[('cublas','libcublas.so.*[0-9]',True),('cudnn','libcudnn.so.*[0-9]',True),"
    "('cuda_nvrtc','libnvrtc.so.*[0-9]',True),('cuda_nvrtc','libnvrtc-builtins.so.*[0-9]',True),"
    "('cuda_runtime','libcudart.so.*[0-9]',True)]";

class TorchPreload : public VenvTest {
 protected:
  // A CUDA wheel's library: libNAME exports NAME_fn; installed at nvidia/FOLDER/lib/SONAME.
  std::string cuda_wheel(const std::string& folder, const std::string& soname) {
    std::string stem = soname.substr(3, soname.find('.') - 3);
    for (char& c : stem)
      if (c == '-') c = '_';
    std::string lib = tmp_ / ("build/nvidia/" + folder + "/" + soname);
    // RUNPATH $ORIGIN, as NVIDIA's wheels build theirs: what they open at run time is beside them.
    build_shared(lib, "int " + stem + "_fn(void) { return 1; }", "-Wl,-soname," + soname + " -Wl,-rpath,'$ORIGIN'",
                 tmp_);
    built_[soname] = lib;
    json paths = {{"nvidia/" + folder + "/lib/" + soname, lib}};
    // NVRTC opens the builtins of its own release at run time (data/package_loads.json).
    if (folder == "cuda_nvrtc") {
      std::string builtins = tmp_ / "build/nvidia/cuda_nvrtc/libnvrtc-builtins.so.12.4";
      build_shared(builtins, "int builtins_fn(void) { return 1; }", "-Wl,-soname,libnvrtc-builtins.so.12.4", tmp_);
      paths["nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.4"] = builtins;
    }
    return wheel({{"name", "nvidia-" + folder + "-" + stem},
                  {"version", "12.4"},
                  {"tag", "py3-none-manylinux_2_17_x86_64"},
                  {"purelib", false},
                  {"paths", paths}});
  }

  // torch `version`: libtorch_global_deps.so needs `global_needs` (found through `global_rpath`,
  // or by no rule), and _C needs `c_needs` with no RPATH to it.
  std::string torch_wheel(const Release& r, const std::string& global_needs, const std::string& global_rpath,
                          const std::string& c_needs) {
    std::string dir = tmp_ / ("build/torch-" + r.version);
    std::string deps = dir + "/lib/libtorch_global_deps.so";
    build_shared(deps, "int global_deps_fn(void) { return 0; }",
                 "-Wl,-soname,libtorch_global_deps.so -Wl,--no-as-needed " + quote(built_.at(global_needs)) +
                     (global_rpath.empty() ? "" : " -Wl,-rpath,'" + global_rpath + "'"),
                 tmp_);
    std::string stem = c_needs.substr(3, c_needs.find('.') - 3);
    std::string ext = dir + "/_C" + suffix_;
    build_ext(ext, "_C", "int " + stem + "_fn(void);", stem + "_fn()",
              quote(built_.at(c_needs)) + " -Wl,-rpath,'$ORIGIN/lib'");
    return wheel({{"name", "torch"},
                  {"version", r.version},
                  {"tag", "cp311-cp311-linux_x86_64"},
                  {"purelib", false},
                  {"files", {{"torch/__init__.py", torch_init(r)}, {"torch/version.py", "cuda = '12.8'\n"}}},
                  {"paths", {{"torch/lib/libtorch_global_deps.so", deps}, {"torch/_C" + suffix_, ext}}}});
  }

  // check's verdict on the venv and the real import agree: no error and an import that works, or
  // the loader's error for `file` in the words the import raises.
  void expect_agree(const Venv& venv, const std::string& file, const std::string& what) {
    int status = -1;
    json report = venv.check(&status);
    std::string real = venv.import("torch");
    if (real.empty()) {
      EXPECT_EQ(status, 0) << what << "\n" << report.dump(1);
      return;
    }
    EXPECT_EQ(status, 1) << what << ": import fails with " << real << "\n" << report.dump(1);
    std::string predicted;
    for (const json& f : report["findings"])
      if (f["code"] == "missing-library" && f["file"] == venv.site() + "/" + file) predicted = f["message"];
    if (real.rfind("OSError: ", 0) == 0) real = real.substr(9);
    EXPECT_EQ(predicted, real) << what << "\n" << report.dump(1);
  }

  std::map<std::string, std::string> built_;
};

// After libtorch_global_deps.so loads: nothing before 2.6; from 2.6, when the wheel's libcudart is
// mapped, NVRTC and nvJitLink, so a _C that needs libnvrtc.so.12 with no RPATH to it loads.
TEST_F(TorchPreload, OpportunisticPreloadArrivesIn26) {
  std::string cudart = cuda_wheel("cuda_runtime", "libcudart.so.12");
  std::string nvrtc = cuda_wheel("cuda_nvrtc", "libnvrtc.so.12");
  std::string nvjitlink = cuda_wheel("nvjitlink", "libnvJitLink.so.12");
  const std::string rpath = "$ORIGIN/../../nvidia/cuda_runtime/lib";
  Release r25{"2.5.1", kList20, "nvidia", "never", "[]"};
  Release r26{"2.6.0", kList20, "nvidia_then_folder", "wheel_cudart", kNvrtcNvjitlink};
  for (const Release& r : {r25, r26}) {
    Venv venv(tmp_, "v" + r.version);
    venv.install({cudart, nvrtc, nvjitlink, torch_wheel(r, "libcudart.so.12", rpath, "libnvrtc.so.12")});
    expect_agree(venv, "torch/_C" + suffix_, "torch " + r.version);
    if (r.version == "2.5.1") EXPECT_NE(venv.import("torch"), "");
    else EXPECT_EQ(venv.import("torch"), "");
  }
}

// 2.6 preloads only after the wheel's libcudart; 2.10 after any libcudart (here torch's own copy),
// and its whole list, stopping at the first library missing; 2.13 takes each on its own.
TEST_F(TorchPreload, WhichCudartAndWhetherAMissingWheelStopsIt) {
  std::string cublas = cuda_wheel("cublas", "libcublas.so.12");
  std::string cudnn = cuda_wheel("cudnn", "libcudnn.so.9");
  std::string nvrtc = cuda_wheel("cuda_nvrtc", "libnvrtc.so.12");
  // torch's own copy of libcudart, beside libtorch_global_deps.so: no wheel's path.
  build_shared(tmp_ / "build/own/libcudart.so.12", "int cudart_fn(void) { return 2; }", "-Wl,-soname,libcudart.so.12",
               tmp_);
  built_["libcudart.so.12"] = tmp_ / "build/own/libcudart.so.12";
  Release r26{"2.6.0", kList20, "nvidia_then_folder", "wheel_cudart", kNvrtcNvjitlink};
  Release r210{"2.10.0", kList210, "nvidia_cuda_or_folder", "any_cudart", kList210};
  Release r213{"2.13.0", kList210, "nvidia_cuda_or_folder", "any_cudart", kList210, true};
  struct Case {
    Release release;
    bool with_cudnn;
    bool loads;
  };
  for (const Case& c :
       {Case{r26, true, false}, Case{r210, true, true}, Case{r210, false, false}, Case{r213, false, true}}) {
    std::string what = "torch " + c.release.version + (c.with_cudnn ? "" : " without cuDNN's wheel");
    Venv venv(tmp_, "v" + c.release.version + (c.with_cudnn ? "" : "-no-cudnn"));
    std::string torch = torch_wheel(c.release, "libcudart.so.12", "$ORIGIN", "libnvrtc.so.12");
    // torch's copy of libcudart.so.12 goes into torch/lib, where RPATH $ORIGIN finds it.
    std::vector<std::string> wheels{cublas, nvrtc,
                                    wheel({{"name", "torch-own-cudart"},
                                           {"version", "1.0"},
                                           {"tag", "py3-none-manylinux_2_17_x86_64"},
                                           {"purelib", false},
                                           {"paths", {{"torch/lib/libcudart.so.12", built_["libcudart.so.12"]}}}}),
                                    torch};
    if (c.with_cudnn) wheels.push_back(cudnn);
    venv.install(wheels);
    expect_agree(venv, "torch/_C" + suffix_, what);
    EXPECT_EQ(venv.import("torch").empty(), c.loads) << what;
  }
}

// The recovery: libtorch_global_deps.so needs libcublas.so.12 by no rule; 2.0 preloads its whole
// list (each required) and loads it again, 1.13.0 has no preload and fails in the loader's words.
TEST_F(TorchPreload, RecoveryPreloadsTheWholeListFrom20) {
  std::vector<std::string> wheels;
  for (const auto& [folder, soname] :
       std::vector<std::pair<std::string, std::string>>{{"cublas", "libcublas.so.12"},
                                                        {"cudnn", "libcudnn.so.9"},
                                                        {"cuda_nvrtc", "libnvrtc.so.12"},
                                                        {"cuda_runtime", "libcudart.so.12"},
                                                        {"cuda_cupti", "libcupti.so.12"},
                                                        {"cufft", "libcufft.so.11"},
                                                        {"curand", "libcurand.so.10"},
                                                        {"cusolver", "libcusolver.so.11"},
                                                        {"cusparse", "libcusparse.so.12"},
                                                        {"nccl", "libnccl.so.2"},
                                                        {"nvtx", "libnvToolsExt.so.1"}})
    wheels.push_back(cuda_wheel(folder, soname));
  Release r1130{"1.13.0", "[]", "nvidia", "never", "[]"};
  Release r20{"2.0.1", kList20, "nvidia", "never", "[]"};
  for (const Release& r : {r1130, r20}) {
    Venv venv(tmp_, "v" + r.version);
    std::vector<std::string> all = wheels;
    all.push_back(torch_wheel(r, "libcublas.so.12", "", "libcudnn.so.9"));
    venv.install(all);
    expect_agree(venv, "torch/lib/libtorch_global_deps.so", "torch " + r.version);
    EXPECT_EQ(venv.import("torch").empty(), r.version == "2.0.1") << r.version;
  }

  // Without NVTX's wheel, 2.0.1's recovery stops at it: `import torch` raises torch's ValueError,
  // though everything it loaded before would load: the finding says it in torch's words, with the
  // wheel that fixes it.
  // fakevision requires torch and imports it first: its import fails with the same ValueError.
  Venv venv(tmp_, "v-no-nvtx");
  std::vector<std::string> all(wheels.begin(), wheels.end() - 1);  // nvtx's is the last
  all.push_back(torch_wheel(r20, "libcublas.so.12", "", "libcudnn.so.9"));
  std::string vision_ext = tmp_ / ("build/fakevision/_ops" + suffix_);
  build_ext(vision_ext, "_ops", "", "0", "");
  all.push_back(platlib_wheel("fakevision", "0.15.2", {{"fakevision/_ops" + suffix_, vision_ext}},
                              {{"fakevision/__init__.py", "import torch\nfrom . import _ops\n"}}, {"torch"}));
  venv.install(all);
  std::string real = venv.import("torch");
  EXPECT_EQ(real.rfind("ValueError: libnvToolsExt.so.*[0-9] not found in the system path [", 0), 0u) << real;
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  json found;
  for (const json& f : report["findings"])
    if (f["code"] == "runtime-library-missing" && f["file"] == venv.site() + "/torch/__init__.py") found = f;
  ASSERT_TRUE(found.is_object()) << report.dump(1);
  EXPECT_EQ(found["message"], real.substr(0, real.find(" [")));  // torch's words, before its sys.path
  EXPECT_EQ(found["library"], "libnvToolsExt.so.*[0-9]");
  std::string hint = found["hint"];
  EXPECT_NE(hint.find("install the wheel that ships it (nvidia-nvtx-cu12)"), std::string::npos) << hint;

  std::string vision_real = venv.import("fakevision");
  EXPECT_EQ(vision_real.substr(0, vision_real.find(" [")), found["message"]) << vision_real;
  json vision;
  for (const json& f : report["findings"])
    if (f["package"] == "fakevision") vision = f;
  ASSERT_TRUE(vision.is_object()) << report.dump(1);
  EXPECT_EQ(vision["code"], "runtime-library-missing");
  EXPECT_EQ(vision["file"], venv.site() + "/fakevision/_ops" + suffix_);
  EXPECT_EQ(vision["message"], found["message"]);
  EXPECT_EQ(vision["caused_by"], json({{"code", "runtime-library-missing"},
                                       {"file", venv.site() + "/torch/__init__.py"},
                                       {"library", "libnvToolsExt.so.*[0-9]"},
                                       {"package", "torch"}}));
  std::string vision_hint = vision["hint"];
  EXPECT_EQ(vision_hint.rfind("fakevision requires torch, whose import raises this ValueError before any module of "
                              "fakevision loads; import torch fails with torch's own error",
                              0),
            0u)
      << vision_hint;
  // Two errors, one of them the other's consequence.
  EXPECT_EQ(report["summary"]["errors"], 2) << report.dump(1);
  EXPECT_EQ(report["summary"]["causes"].get<int>(),
            report["summary"]["errors"].get<int>() + report["summary"]["warnings"].get<int>() - 1)
      << report.dump(1);
  CommandResult why = venv.envdoctor_run("why", "fakevision");
  EXPECT_EQ(why.status, 1) << why.out << why.err;
}

// torch's rules of data/package_loads.json, as the engine reads them.
const environment::PackageRules& torch_rules() {
  static const environment::PackageRules rules = [] {
    std::string error;
    std::optional<environment::PackageRules> r = environment::PackageRules::parse(
        json::parse(std::ifstream(std::string(ENVDOCTOR_SOURCE_DIR) + "/data/package_loads.json")), &error);
    if (!r) ADD_FAILURE() << error;
    return r.value_or(environment::PackageRules{});
  }();
  return rules;
}

// The first torch rule whose releases hold `version`, as the engine takes it; nullptr for none.
const environment::PackageRule* torch_rule(const std::string& version) {
  for (const environment::PackageRule& r : torch_rules().rules)
    if (std::find(r.packages.begin(), r.packages.end(), "torch") != r.packages.end() &&
        imports::in_releases(version, r.releases))
      return &r;
  return nullptr;
}

const environment::Step* step_with_id(const environment::PackageRule& r, const std::string& id) {
  for (const environment::Step& s : r.steps)
    if (s.id == id) return &s;
  return nullptr;
}

size_t list_size(const environment::PackageRule& r, const std::string& name) {
  for (const auto& [key, items] : r.lists)
    if (key == name) return items.size();
  return 0;
}

// Which release behaves how: the rows of docs/torch.md, with the local label, pre-releases and
// the versions between rows.
TEST(TorchPreloadRules, EachReleaseGetsItsRow) {
  struct Row {
    const char* version;
    const char* id;
    size_t libraries;               // the recovery's list (NVTX apart, where it is optional)
    const char* mapped;             // what the preload after a successful load waits for; "" for none
    std::vector<std::string> dirs;  // the directories of each sys.path entry searched
    bool if_nvidia;
    bool each;
  };
  const std::vector<std::string> n{"nvidia/{lib}/lib"}, nf{"nvidia/{lib}/lib", "{lib}/lib"},
      cu{"nvidia/{lib}/lib", "nvidia/cu{cuda}/lib", "{lib}/lib"};
  const char* wheel = "nvidia/cuda_runtime/lib/libcudart.so";
  for (const Row& r : std::vector<Row>{{"1.12.1", "torch-1.13.0", 0, "", {}, false, false},
                                       {"1.13.0", "torch-1.13.0", 0, "", {}, false, false},
                                       {"1.13.1+cu117", "torch-1.13.1", 2, "", n, true, false},
                                       {"2.0.1", "torch-2.0", 11, "", n, true, false},
                                       {"2.4.1+cu124", "torch-2.0", 11, "", n, true, false},
                                       {"2.5.0", "torch-2.5", 12, "", n, true, false},
                                       {"2.6.0rc1", "torch-2.6", 13, wheel, nf, true, false},
                                       {"2.7.1+cu126", "torch-2.7", 14, wheel, nf, false, false},
                                       {"2.8.0", "torch-2.7", 14, wheel, nf, false, false},
                                       {"2.9.1+cu130", "torch-2.9", 15, wheel, cu, false, false},
                                       {"2.10.0.dev20251201", "torch-2.10", 16, "libcudart.so", cu, false, false},
                                       {"2.12.0", "torch-2.11", 16, "libcudart.so", cu, false, false},
                                       {"2.13.0", "torch-2.13", 16, "libcudart.so", cu, false, true}}) {
    const environment::PackageRule* rule = torch_rule(r.version);
    ASSERT_TRUE(rule) << r.version;
    EXPECT_EQ(rule->id, r.id) << r.version;
    EXPECT_EQ(list_size(*rule, "cuda_libs"), r.libraries) << r.version;
    const environment::Step* recovery = step_with_id(*rule, "recovery");
    ASSERT_EQ(recovery != nullptr, r.libraries > 0) << r.version;
    if (recovery) {
      const environment::Place& place = recovery->steps.front().places.front();
      EXPECT_EQ(place.dirs, r.dirs) << r.version;
      EXPECT_EQ(place.if_dir, r.if_nvidia ? "nvidia" : "") << r.version;
    }
    const environment::Step* after = step_with_id(*rule, "after-cudart");
    ASSERT_EQ(after != nullptr, *r.mapped != 0) << r.version;
    if (!after) continue;
    EXPECT_EQ(after->when->parts.back().name, r.mapped) << r.version;
    using Kind = environment::Outcome::Kind;
    EXPECT_EQ(after->steps.front().missing.kind, r.each ? Kind::kContinue : Kind::kStop) << r.version;
  }
  EXPECT_EQ(torch_rule("not a version"), nullptr);
  // 2.11's list begins with cuBLASLt, and NVTX comes after it, optional.
  const environment::PackageRule* r211 = torch_rule("2.11.0");
  ASSERT_TRUE(r211);
  EXPECT_EQ(r211->lists.front().second.front().names.front(), "libcublasLt.so.*[0-9]");
  const environment::Step& nvtx = step_with_id(*r211, "recovery")->steps[1];
  EXPECT_EQ(nvtx.lib, "nvtx");
  EXPECT_EQ(nvtx.missing.kind, environment::Outcome::Kind::kContinue);
}

// The CUDA major torch was built for, as the rule's value reads it from torch/version.py.
TEST(TorchPreloadRules, CudaMajorFromVersionPy) {
  const environment::PackageRule* rule = torch_rule("2.11.0");
  ASSERT_TRUE(rule);
  ASSERT_FALSE(rule->values.empty());
  const environment::ValueSource& from = rule->values.front().second.front();
  EXPECT_EQ(from.name, "torch/version.py");
  auto major = [&](const std::string& text) -> std::string {
    std::smatch m;
    return std::regex_search(text, m, std::regex(from.match)) ? m[1].str() : "";
  };
  EXPECT_EQ(major("__version__ = '2.9.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"), "13");
  EXPECT_EQ(major("cuda = '12.8'\n"), "12");
  EXPECT_EQ(major("cuda: Optional[str] = None\n"), "");
  EXPECT_EQ(major(""), "");
}

TEST(TorchPreloadRules, AnErrorNamesALibraryByItsStem) {
  const environment::PackageRule* rule = torch_rule("2.5.1");
  ASSERT_TRUE(rule);
  const std::vector<environment::ListItem>& list = rule->lists.front().second;
  EXPECT_TRUE(imports::names_a_library(list, "libcublas.so.12: cannot open shared object file"));
  EXPECT_TRUE(imports::names_a_library(list, "libnvToolsExt.so.1: cannot open shared object file"));
  EXPECT_FALSE(imports::names_a_library(list, "libfakecublas.so.12: cannot open shared object file"));
  EXPECT_FALSE(imports::names_a_library(list, "libgomp.so.1: cannot open shared object file"));
}

}  // namespace
}  // namespace envdoctor::test
