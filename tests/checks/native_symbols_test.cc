// Undefined symbols that another library does define (issue 31, items 2 and 3), each built for
// real and held to the real import's message:
//  - one SONAME, two copies: nvidia-nccl-cu12 and nvidia-nccl-cu13 both ship libnccl.so.2, and the
//    copy that wins lacks `ncclCommResume` (pytorch#186591); the hint names the winner, the rule
//    and directory, the copy that defines the symbol and its package, and the fix, which is run;
//  - a symbol added in a minor release under an unchanged version node
//    (`cudaGetDriverEntryPointByVersion, version libcudart.so.12`, cutlass#2079);
//  - the C++ ABI flip: an extension built with `-D_GLIBCXX_USE_CXX11_ABI=0` against a libc10 built
//    with the new ABI (flash-attention#1644), the reverse, and another signature of the same
//    function (an extension built against another torch, which its version names).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class NativeSymbolsTest : public VenvTest {
 protected:
  // The one undefined-symbol finding of `report`, whose message must be the real import's.
  json the_undefined_symbol(const Venv& venv, const std::string& module) {
    std::string real = venv.import(module);
    EXPECT_NE(real.find("undefined symbol: "), std::string::npos) << real;
    int status = -1;
    json report = venv.check(&status);
    EXPECT_EQ(status, 1);
    auto undefined = findings(report, "undefined-symbol");
    EXPECT_EQ(undefined.size(), 1u) << report.dump(1);
    if (undefined.empty()) return json::object();
    EXPECT_EQ(undefined[0]["message"], real);
    return undefined[0];
  }

  // nvidia-nccl-cu12 2.29.3 (nvidia/nccl/lib/libnccl.so.2, without ncclCommResume) and
  // nvidia-nccl-cu13 2.29.7 (nvidia/cu13/lib/libnccl.so.2, with it); faketorch 2.10.0, built
  // against the cu13 copy, calls ncclCommResume and finds libnccl.so.2 by RUNPATH
  // $ORIGIN/../nvidia/nccl/lib:$ORIGIN/../nvidia/cu13/lib, so the cu12 copy wins.
  std::vector<std::string> nccl_wheels() {
    std::string cu12 = tmp_ / "build/cu12/libnccl.so.2";
    std::string cu13 = tmp_ / "build/cu13/libnccl.so.2";
    build_shared(cu12, "int ncclCommInitRank(void) { return 0; }", "-Wl,-soname,libnccl.so.2", tmp_);
    build_shared(cu13, "int ncclCommInitRank(void) { return 0; } int ncclCommResume(void) { return 0; }",
                 "-Wl,-soname,libnccl.so.2", tmp_);
    std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
    build_ext(ext, "_C", "int ncclCommResume(void);", "ncclCommResume()",
              quote(cu13) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/nccl/lib:$ORIGIN/../nvidia/cu13/lib'");
    return {platlib_wheel("nvidia-nccl-cu12", "2.29.3", {{"nvidia/nccl/lib/libnccl.so.2", cu12}}),
            platlib_wheel("nvidia-nccl-cu13", "2.29.7", {{"nvidia/cu13/lib/libnccl.so.2", cu13}}),
            platlib_wheel("faketorch", "2.10.0", {{"faketorch/_C" + suffix_, ext}}, {{"faketorch/__init__.py", ""}},
                          {"nvidia-nccl-cu13"})};
  }

  // The flash-attn extension of `version`, built with `ext_abi` against a c10::Error(SourceLocation,
  // std::string), imported beside torch 2.9.0's libc10 built with `abi` and `signature`: its one
  // undefined symbol.
  json c10_case(int abi, const std::string& signature, int ext_abi, const std::string& version) {
    Venv venv(tmp_, "v");
    c10_pair(venv, abi, signature, ext_abi, "SourceLocation, std::string", ", std::string(\"m\")", version);
    return the_undefined_symbol(venv, "flash_attn_2_cuda");
  }

  // libc10.so of torch 2.9.0, built with `abi` (the new one: 1), exporting c10::Error's
  // constructor of `signature` ("c10::SourceLocation, std::string"); flash-attn `version`, whose
  // extension, built with `ext_abi` against a libc10 of that ABI with `call_signature`,
  // constructs a c10::Error.
  void c10_pair(const Venv& venv, int abi, const std::string& signature, int ext_abi, const std::string& call_signature,
                const std::string& call_arguments, const std::string& version) {
    const std::string types = "#include <string>\nnamespace c10 { struct SourceLocation { const char* f; int l; };\n";
    auto c10 = [&](const std::string& path, const std::string& sig, int with) {
      build_shared_cxx(path, types + "struct Error { Error(" + sig + "); }; Error::Error(" + sig + ") {} }\n",
                       "-Wl,-soname,libc10.so -D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(with), tmp_);
    };
    // The torch the extension was built against, and the one installed.
    std::string built_against = tmp_ / "build/torch-then/lib/libc10.so";
    c10(built_against, call_signature, ext_abi);
    std::string lib = tmp_ / "build/torch/lib/libc10.so";
    c10(lib, signature, abi);
    std::string ext = tmp_ / ("build/flash_attn_2_cuda" + suffix_);
    build_shared_cxx(ext,
                     extension_source("flash_attn_2_cuda", types + "struct Error { Error(" + call_signature + "); }; }",
                                      "(c10::Error(c10::SourceLocation{\"f\", 1}" + call_arguments + "), 1L)"),
                     "-I" + quote(include_) + " " + quote(built_against) + " -D_GLIBCXX_USE_CXX11_ABI=" +
                         std::to_string(ext_abi) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/torch/lib'",
                     tmp_);
    venv.install(
        {platlib_wheel("torch", "2.9.0", {{"torch/lib/libc10.so", lib}}, {{"torch/__init__.py", ""}}),
         platlib_wheel("flash-attn", version, {{"flash_attn_2_cuda" + suffix_, ext}}, json::object(), {"torch"})});
  }
};

TEST_F(NativeSymbolsTest, SameSonameTwoCopiesSaysWhichWonAndUninstallsTheWrongOne) {
  auto venv = venv_with_pip();
  venv->install(nccl_wheels());
  json f = the_undefined_symbol(*venv, "faketorch._C");
  std::string site = venv->site();
  EXPECT_EQ(f["hint"], "ncclCommResume is defined by another copy of libnccl.so.2: " + site +
                           "/nvidia/cu13/lib/libnccl.so.2 (nvidia-nccl-cu13 2.29.7); the copy that serves the process "
                           "is " +
                           site + "/nvidia/nccl/lib/libnccl.so.2 (nvidia-nccl-cu12 2.29.3), found by RUNPATH in " +
                           site +
                           "/nvidia/nccl/lib; uninstall nvidia-nccl-cu12 (nothing installed requires it), so that "
                           "nvidia-nccl-cu13's copy is the one found");
  std::string fix = f["fix_command"];
  EXPECT_EQ(fix, venv->python() + " -m pip uninstall -y nvidia-nccl-cu12");
  CommandResult pasted = run("cd / && env -u VIRTUAL_ENV PIP_DISABLE_PIP_VERSION_CHECK=1 /bin/sh -c " + quote(fix));
  ASSERT_EQ(pasted.status, 0) << pasted.err;
  EXPECT_EQ(venv->import("faketorch._C"), "");
  int status = -1;
  json after = venv->check(&status);
  EXPECT_EQ(status, 0) << after.dump(1);
}

// When another package requires the winner, uninstalling it is no fix: the order that makes the
// right copy win is, and the real import with that LD_PRELOAD is its referee.
TEST_F(NativeSymbolsTest, SameSonameTwoCopiesRequiredWinnerGetsTheOrder) {
  Venv venv(tmp_, "v");
  std::vector<std::string> wheels = nccl_wheels();
  wheels.push_back(
      platlib_wheel("fake-jax", "0.5", json::object(), {{"fake_jax/__init__.py", ""}}, {"nvidia-nccl-cu12"}));
  venv.install(wheels);
  json f = the_undefined_symbol(venv, "faketorch._C");
  std::string site = venv.site();
  std::string hint = f["hint"];
  std::string preload = site + "/nvidia/cu13/lib/libnccl.so.2";
  EXPECT_NE(hint.find("; nvidia-nccl-cu12 is required by fake-jax; make the right copy win: load it first "
                      "(LD_PRELOAD=" +
                      preload + ")"),
            std::string::npos)
      << hint;
  EXPECT_FALSE(f.contains("fix_command")) << f.dump(1);
  EXPECT_EQ(venv.import("faketorch._C", "LD_PRELOAD=" + preload), "");
}

// cutlass#2079: the reference is versioned (libcudart.so.12), and the installed runtime has the
// node but is a release older than the one the extension was built against.
TEST_F(NativeSymbolsTest, SymbolAddedUnderAnUnchangedVersionNode) {
  std::string map_old = tmp_.write("build/old.map", "libcudart.so.12 { global: cudaMalloc; local: *; };\n");
  std::string map_new = tmp_.write(
      "build/new.map", "libcudart.so.12 { global: cudaMalloc; cudaGetDriverEntryPointByVersion; local: *; };\n");
  std::string old_rt = tmp_ / "build/124/libcudart.so.12";
  std::string new_rt = tmp_ / "build/125/libcudart.so.12";
  build_shared(old_rt, "int cudaMalloc(void) { return 0; }",
               "-Wl,-soname,libcudart.so.12 -Wl,--version-script=" + quote(map_old), tmp_);
  build_shared(new_rt, "int cudaMalloc(void) { return 0; } int cudaGetDriverEntryPointByVersion(void) { return 0; }",
               "-Wl,-soname,libcudart.so.12 -Wl,--version-script=" + quote(map_new), tmp_);
  std::string ext = tmp_ / ("build/cutlass_ext/_k" + suffix_);
  build_ext(ext, "_k", "int cudaGetDriverEntryPointByVersion(void);", "cudaGetDriverEntryPointByVersion()",
            quote(new_rt) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/cuda_runtime/lib'");
  Venv venv(tmp_, "v");
  venv.install(
      {platlib_wheel("nvidia-cuda-runtime-cu12", "12.4.127", {{"nvidia/cuda_runtime/lib/libcudart.so.12", old_rt}}),
       platlib_wheel("cutlass-ext", "1.0", {{"cutlass_ext/_k" + suffix_, ext}}, {{"cutlass_ext/__init__.py", ""}},
                     {"nvidia-cuda-runtime-cu12"})});
  json f = the_undefined_symbol(venv, "cutlass_ext._k");
  EXPECT_EQ(f["version"], "libcudart.so.12");
  std::string hint = f["hint"];
  EXPECT_NE(hint.find("; " + venv.site() +
                      "/nvidia/cuda_runtime/lib/libcudart.so.12 (nvidia-cuda-runtime-cu12 12.4.127) has version "
                      "libcudart.so.12 but not cudaGetDriverEntryPointByVersion: a library adds symbols under an "
                      "unchanged version node in later minor releases, so nvidia-cuda-runtime-cu12 12.4.127 is older "
                      "than the release cutlass-ext 1.0 was built against"),
            std::string::npos)
      << hint;
}

// flash-attention#1644: a cxx11abiFALSE build against torch built with the new ABI.
TEST_F(NativeSymbolsTest, OldCxxAbiExtensionAgainstNewAbiTorch) {
  if (!have_tool("g++")) GTEST_SKIP() << "needs g++";
  json f = c10_case(1, "SourceLocation, std::string", 0, "2.8.3+cu12torch2.9cxx11abiFALSE");
  EXPECT_EQ(f["symbol"], "_ZN3c105ErrorC1ENS_14SourceLocationESs");
  EXPECT_EQ(f["hint"],
            "flash-attn 2.8.3+cu12torch2.9cxx11abiFALSE was built with the old C++ ABI (`_GLIBCXX_USE_CXX11_ABI=0`): "
            "it asks for c10::Error::Error(c10::SourceLocation, std::string); torch 2.9.0 exports the new one "
            "(c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
            "std::allocator<char> >)): install the build marked cxx11abiTRUE of flash-attn");
}

TEST_F(NativeSymbolsTest, NewCxxAbiExtensionAgainstOldAbiTorch) {
  if (!have_tool("g++")) GTEST_SKIP() << "needs g++";
  json f = c10_case(0, "SourceLocation, std::string", 1, "2.8.3+cu12torch2.9cxx11abiTRUE");
  std::string hint = f["hint"];
  EXPECT_EQ(hint.rfind("flash-attn 2.8.3+cu12torch2.9cxx11abiTRUE was built with the new C++ ABI "
                       "(`_GLIBCXX_USE_CXX11_ABI=1`): ",
                       0),
            0u)
      << hint;
  EXPECT_NE(hint.find("; torch 2.9.0 exports the old one (c10::Error::Error(c10::SourceLocation, std::string)): "
                      "install the build marked cxx11abiFALSE of flash-attn"),
            std::string::npos)
      << hint;
}

// The same ABI, another signature: the extension was built against torch 2.8, as its version
// says, and torch 2.9.0's constructor takes one more argument.
TEST_F(NativeSymbolsTest, AnotherSignatureNamesTheTorchItWasBuiltFor) {
  if (!have_tool("g++")) GTEST_SKIP() << "needs g++";
  json f = c10_case(1, "SourceLocation, std::string, int", 1, "2.8.3+cu12torch2.8cxx11abiTRUE");
  std::string hint = f["hint"];
  EXPECT_NE(hint.find("; torch 2.9.0 exports c10::Error::Error only in another signature, "
                      "c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
                      "std::allocator<char> >, int); flash-attn 2.8.3+cu12torch2.8cxx11abiTRUE says it was built "
                      "against torch 2.8, and torch 2.9.0 is installed"),
            std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("C++ ABI"), std::string::npos) << hint;
}

}  // namespace
}  // namespace envdoctor::test
