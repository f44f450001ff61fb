// `envdoctor cuda` on libraries no package owns (issue 26, item 5), as llama.cpp's prebuilt CUDA
// libraries arrive: two files of one name, libggml-cuda.so, in two folders, built for two CUDA
// majors. A: nvcc-built, SASS sm_90a only, linked to a system-style CUDA 13 toolkit whose
// libcudart.so.13 is a link to libcudart.so.13.0.96 (the toolkit's real file, copied). B: the
// sm_80 + compute_80 fatbinary of the committed fixture, in a library that NEEDs libcudart.so.12,
// which is nowhere. C: a library linked to a second toolkit folder that has no versioned file
// name but NVIDIA's version.json. The referees: readelf's NEEDED entries, the symlink target,
// version.json, the fatbinary headers walked by tests/fixtures/fatbin_walk.py, and for the
// verdicts NVIDIA's tables (cuda-facts.md: driver 595.45.04 is CUDA 13.2's, >= 13.0's 580.65.06;
// `a` code runs on exactly its own compute capability).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/cuda_fixtures.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

std::string needed(const std::string& file) {
  CommandResult r = run("readelf -d " + quote(file) + " | sed -n 's/.*(NEEDED).*\\[\\(libcudart[^]]*\\)\\].*/\\1/p'");
  return r.out.substr(0, r.out.find('\n'));
}

TEST(CudaRows, FilesWithoutPackageAreRowsOfTheirOwnAndMissingRuntimesAreListed) {
  if (!have_tool("gcc") || !have_tool("python3") || !have_tool("objcopy") || !have_tool("readelf"))
    GTEST_SKIP() << "needs gcc, python3, objcopy and readelf";
  if (!fs::exists(kNvcc) || !fs::exists(kCudart13)) GTEST_SKIP() << "needs nvcc and " << kCudart13;
  TempDir tmp;
  // The toolkit of A: lib64/libcudart.so.13 -> libcudart.so.13.0.96.
  fs::create_directories(tmp / "cuda-13.0/lib64");
  fs::copy_file(fs::canonical(kCudart13), tmp / "cuda-13.0/lib64/libcudart.so.13.0.96");
  fs::create_symlink("libcudart.so.13.0.96", tmp / "cuda-13.0/lib64/libcudart.so.13");
  // The toolkit of C: a plain libcudart.so.13 and NVIDIA's version.json at the top.
  fs::create_directories(tmp / "toolkit/lib64");
  fs::copy_file(fs::canonical(kCudart13), tmp / "toolkit/lib64/libcudart.so.13");
  tmp.write("toolkit/version.json", R"json({
   "cuda" : { "name" : "CUDA SDK", "version" : "13.0.2" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "13.0.96" }
})json");

  Venv venv(tmp, "rows");
  std::string a = venv.site() + "/ggml_a/libggml-cuda.so", b = venv.site() + "/ggml_b/libggml-cuda.so";
  std::string c = venv.site() + "/other/libother.so";
  fs::create_directories(venv.site() + "/ggml_a");
  fs::create_directories(venv.site() + "/ggml_b");
  fs::create_directories(venv.site() + "/other");
  std::string cu = tmp.write("build/k.cu",
                             "__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"
                             "extern \"C\" void launch(float* x) { add<<<1, 32>>>(x); }\n");
  CommandResult nvcc =
      run(quote(kNvcc) + " -shared -Xcompiler -fPIC -cudart shared -gencode arch=compute_90a,code=sm_90a" +
          " -Xlinker -rpath," + quote(tmp / "cuda-13.0/lib64") + " -o " + quote(a) + " " + quote(cu));
  ASSERT_EQ(nvcc.status, 0) << nvcc.err;
  std::string stand_in = tmp / "build/cudart12/libcudart.so.12";
  build_shared(stand_in, "int cudart12_fn(void) { return 12; }", "-Wl,-soname,libcudart.so.12", tmp);
  CommandResult fatbin =
      run("cd " + quote(tmp / "build") + " && objcopy -O binary --only-section=.nv_fatbin " +
          quote(cuda_fixture("sm80_ptx.so")) +
          " fatbin.bin && objcopy -I binary -O elf64-x86-64 "
          "--rename-section .data=.nv_fatbin,alloc,load,readonly,data,contents fatbin.bin fatbin.o && gcc -shared "
          "fatbin.o -o " +
          quote(b) + " -Wl,--no-as-needed " + quote(stand_in));
  ASSERT_EQ(fatbin.status, 0) << fatbin.err;
  build_shared(c, "int cudaGetDeviceCount(int*); int other(void) { int n; return cudaGetDeviceCount(&n); }",
               "-Wl,--no-as-needed " + quote(tmp / "toolkit/lib64/libcudart.so.13") + " -Wl,-rpath," +
                   quote(tmp / "toolkit/lib64"),
               tmp);

  // What the files are.
  EXPECT_EQ(needed(a), "libcudart.so.13");
  EXPECT_EQ(needed(b), "libcudart.so.12");
  EXPECT_EQ(fs::read_symlink(tmp / "cuda-13.0/lib64/libcudart.so.13"), "libcudart.so.13.0.96");
  EXPECT_EQ(json::parse(read_bytes(tmp / "toolkit/version.json"))["cuda_cudart"]["version"], "13.0.96");
  bool skipped = false;
  std::vector<std::string> walk_a = fatbin_walk(a, &skipped), walk_b = fatbin_walk(b, &skipped);
  if (!skipped) {
    ASSERT_FALSE(walk_a.empty());
    for (const std::string& entry : walk_a) EXPECT_EQ(entry, "sm_90a");  // SASS for sm_90a alone, no PTX
    ASSERT_EQ(walk_b.size(), 2u);
    EXPECT_EQ(walk_b[0], "sm_80");
    EXPECT_EQ(walk_b[1].substr(0, 11), "compute_80 ");
  }

  CommandResult cuda = venv.envdoctor_run("cuda", "--json --gpu sm_90 --driver 595.45.04");
  ASSERT_EQ(cuda.status, 0) << cuda.err;
  expect_schema_valid("cuda", cuda.out);
  json j = json::parse(cuda.out);
  // One row per file, by path, each with its own code and verdict.
  std::map<std::string, json> rows;
  for (const json& p : j["packages"]) {
    EXPECT_TRUE(p["name"].is_null()) << p.dump();
    rows[p["file"].get<std::string>()] = p;
  }
  ASSERT_EQ(rows.size(), 3u) << j.dump(1);
  EXPECT_EQ(rows[a]["sass"], json({"sm_90a"}));
  EXPECT_EQ(rows[a]["ptx"], json::array());
  EXPECT_EQ(rows[a]["cuda_majors"], json({13}));
  EXPECT_EQ(rows[a]["coverage"], json({{"sm_90", "sass"}}));
  EXPECT_EQ(rows[b]["sass"], json({"sm_80"}));
  EXPECT_EQ(rows[b]["ptx"], json({"compute_80"}));
  EXPECT_EQ(rows[b]["cuda_majors"], json({12}));
  EXPECT_EQ(rows[b]["uses"], json::parse(R"([{"library": "libcudart.so.12", "from": "not found"}])"));
  EXPECT_EQ(rows[b]["coverage"], json({{"sm_90", "ptx-jit"}}));
  EXPECT_EQ(rows[c]["cuda_majors"], json({13}));
  // The runtime B lacks, with who needs it.
  EXPECT_EQ(j["missing_runtimes"],
            json::parse(R"([{"soname": "libcudart.so.12", "cuda_major": 12, "needed_by": [")" + b + R"("]}])"));
  // The two runtimes found, their releases read from the link's target and from version.json, and
  // the driver of CUDA 13.2 runs 13.0 fully.
  ASSERT_EQ(j["runtimes"].size(), 2u) << j.dump(1);
  for (const json& rt : j["runtimes"]) {
    EXPECT_EQ(rt["version"], "13.0") << rt.dump();
    EXPECT_EQ(rt["driver_ok"], true) << rt.dump();
    EXPECT_EQ(rt["minor_compat"], false) << rt.dump();
    EXPECT_EQ(rt["driver_required"], "580.65.06") << rt.dump();
    if (rt["path"].get<std::string>().find("/cuda-13.0/") != std::string::npos) {
      EXPECT_EQ(rt["version_source"], "file libcudart.so.13.0.96");
      EXPECT_EQ(rt["used_by"], json({a}));
    } else {
      EXPECT_EQ(rt["version_source"], (tmp / "toolkit/version.json") + " (cuda_cudart 13.0.96)");
      EXPECT_EQ(rt["used_by"], json({c}));
    }
  }

  // The table says the same, with paths where names would be ambiguous.
  CommandResult text = venv.envdoctor_run("cuda", "--gpu sm_90 --driver 595.45.04");
  EXPECT_NE(text.out.find("  libcudart.so.12  not found\n    needed by: " + b + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    used by: " + a + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(a + " (no package)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(b + " (no package)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("13.x"), std::string::npos) << text.out;

  // `check` shares the verdict: 13.0 on 595.45.04 is no case of minor-version compatibility.
  CommandResult check = venv.envdoctor_run("check", "--gpu sm_90 --driver 595.45.04");
  EXPECT_EQ(check.out.find("minor-version compatibility"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("no SASS for sm_90 in " + b), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("no SASS for sm_90 in " + a), std::string::npos) << check.out;
}

}  // namespace
}  // namespace envdoctor::test
