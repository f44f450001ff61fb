// torch's own loading, modelled: torch/__init__.py loads lib/libtorch_global_deps.so with
// RTLD_GLOBAL and, when that fails for a missing CUDA library, preloads every nvidia/*/lib
// library it finds on sys.path and tries again. A library that torch's extension needs with no
// RPATH to it therefore loads. The package here is a small torch built by the test with the same
// __init__ logic; the referee is a real `import torch`.
#include <gtest/gtest.h>

#include "support/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const char* kTorchInit = R"(import ctypes, glob, os, sys

def _load_global_deps():
    lib = os.path.join(os.path.dirname(__file__), "lib", "libtorch_global_deps.so")
    try:
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        for path in sys.path:
            for so in sorted(glob.glob(os.path.join(path, "nvidia", "*", "lib", "lib*.so.*"))):
                ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)

_load_global_deps()
from torch._C import *
)";

TEST(TorchContext, GlobalDepsPreloadMakesNvidiaLibrariesVisible) {
  if (!have_tool("gcc") || !have_tool("python3") || run("python3 -m pip --version").status != 0)
    GTEST_SKIP() << "needs gcc, python3 and pip";
  std::string include = python_include();
  if (!fs::exists(include + "/Python.h")) GTEST_SKIP() << "needs Python.h";
  TempDir tmp;
  fs::create_directories(tmp / "wheels");
  std::string suffix = ext_suffix();

  std::string cublas = tmp / "build/libfakecublas.so.12";
  build_shared(cublas, "int cublas_fn(void) { return 12; }", "-Wl,-soname,libfakecublas.so.12", tmp);
  // Neither torch library has a path to nvidia/: only the preload makes them loadable.
  std::string cuda = tmp / "build/torch/lib/libtorch_cuda.so";
  build_shared(cuda, "int cublas_fn(void); int torch_cuda_fn(void) { return cublas_fn(); }",
               "-Wl,-soname,libtorch_cuda.so " + quote(cublas), tmp);
  std::string deps = tmp / "build/torch/lib/libtorch_global_deps.so";
  build_shared(deps, "int cublas_fn(void); int global_deps_fn(void) { return cublas_fn(); }",
               "-Wl,-soname,libtorch_global_deps.so -Wl,--no-as-needed " + quote(cublas), tmp);
  std::string ext = tmp / ("build/torch/_C" + suffix);
  build_shared(ext, extension_source("_C", "int torch_cuda_fn(void);", "torch_cuda_fn()"),
               "-I" + quote(include) + " " + quote(cuda) + " -Wl,-rpath,'$ORIGIN/lib'", tmp);

  std::string nvidia = make_wheel(tmp / "wheels", {{"name", "nvidia-fakecublas-cu12"},
                                                   {"version", "12.4"},
                                                   {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                   {"purelib", false},
                                                   {"paths", {{"nvidia/fakecublas/lib/libfakecublas.so.12", cublas}}}});
  std::string torch = make_wheel(tmp / "wheels", {{"name", "torch"},
                                                  {"version", "2.9.0"},
                                                  {"tag", "cp311-cp311-linux_x86_64"},
                                                  {"purelib", false},
                                                  {"requires", {"nvidia-fakecublas-cu12"}},
                                                  {"files", {{"torch/__init__.py", kTorchInit}}},
                                                  {"paths",
                                                   {{"torch/lib/libtorch_cuda.so", cuda},
                                                    {"torch/lib/libtorch_global_deps.so", deps},
                                                    {"torch/_C" + suffix, ext}}}});
  Venv venv(tmp, "v");
  venv.install({nvidia, torch});

  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_EQ(report["summary"]["errors"], 0) << report.dump(1);
  EXPECT_EQ(venv.import("torch"), "");

  // Without the CUDA library the preload finds nothing and the retry fails, as predicted.
  venv.uninstall("nvidia-fakecublas-cu12");
  report = venv.check(&status);
  EXPECT_EQ(status, 1);
  std::string predicted;
  for (const json& f : report["findings"])
    if (f["code"] == "missing-library" && f["file"] == venv.site() + "/torch/lib/libtorch_global_deps.so")
      predicted = f["message"];
  ASSERT_FALSE(predicted.empty()) << report.dump(1);
  std::string real = venv.import("torch");
  const std::string os_error = "OSError: ";
  if (real.rfind(os_error, 0) == 0) real = real.substr(os_error.size());
  EXPECT_EQ(real, predicted);
}

}  // namespace
}  // namespace envdoctor::test
