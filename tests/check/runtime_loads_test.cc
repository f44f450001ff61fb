// Libraries opened at run time by name (issue 31, item 1; data/runtime_loads.json). A cuDNN-shaped
// wheel: libcudnn.so.9 (RUNPATH $ORIGIN) opens its seven sub-libraries by name when first called,
// trying NAME.so.9.4.0, NAME.so.9.4, NAME.so.9 and NAME.so as cuDNN 9 does, and prints cuDNN's
// words when none loads; an NVRTC-shaped wheel whose libnvrtc.so.12 opens the builtins of its own
// version. The referees: the real call from an extension module (`python -c "import m; m.f()"`)
// with LD_DEBUG=libs, which shows the file the dlopen took, and the words the library prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "support/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::vector<std::string> kSubLibraries = {"libcudnn_graph",
                                                "libcudnn_engines_precompiled",
                                                "libcudnn_engines_runtime_compiled",
                                                "libcudnn_heuristic",
                                                "libcudnn_ops",
                                                "libcudnn_cnn",
                                                "libcudnn_adv"};

class RuntimeLoadsTest : public VenvTest {
 protected:
  // A library that dlopens each of `entries` (the names tried, in order) when `function` is
  // called, and prints `words` (a printf format of the names tried) when none of one entry loads.
  static std::string opener_source(const std::string& function, const std::vector<std::vector<std::string>>& entries,
                                   const std::string& format) {
    std::string table;
    for (const auto& names : entries) {
      table += "{";
      for (const std::string& n : names) table += "\"" + n + "\", ";
      table += "0},";
    }
    return "#include <dlfcn.h>\n#include <stdio.h>\n#include <string.h>\n"
           "static const char* names[][5] = {" +
           table +
           "};\n"
           "int " +
           function +
           "(void) {\n"
           "  for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i) {\n"
           "    void* h = 0; char list[1024] = \"\";\n"
           "    for (int k = 0; names[i][k] && !h; ++k) {\n"
           "      h = dlopen(names[i][k], RTLD_NOW | RTLD_LOCAL);\n"
           "      if (k) strcat(list, \", \");\n"
           "      strcat(list, names[i][k]);\n"
           "    }\n"
           "    if (!h) { fprintf(stderr, " +
           format +
           "); return 1; }\n"
           "  }\n"
           "  return 0;\n"
           "}\n";
  }

  // The files LD_DEBUG=libs says were initialized ("calling init: PATH"), lexically normal.
  static std::set<std::string> initialized(const std::string& debug) {
    std::set<std::string> out;
    for (size_t at = debug.find("calling init: "); at != std::string::npos; at = debug.find("calling init: ", at + 1)) {
      size_t end = debug.find('\n', at);
      out.insert(fs::path(debug.substr(at + 14, end - at - 14)).lexically_normal().string());
    }
    return out;
  }

  // The real call: `import MODULE; MODULE.f()` with LD_DEBUG=libs; its stderr and exit status.
  CommandResult call(const Venv& venv, const std::string& module) {
    return run("cd / && env LD_DEBUG=libs " + quote(venv.python()) + " -c " +
               quote("import sys, " + module + " as m; sys.exit(m.f())"));
  }

  // nvidia-cudnn-cu12 9.4.0.58 (nvidia/cudnn/lib: libcudnn.so.9 and its sub-libraries) and
  // faketorch, whose _C.f() calls cudnnCreate.
  void install_cudnn(const Venv& venv) {
    std::vector<std::vector<std::string>> entries;
    std::vector<std::pair<std::string, std::string>> files;
    for (const std::string& sub : kSubLibraries) {
      entries.push_back({sub + ".so.9.4.0", sub + ".so.9.4", sub + ".so.9", sub + ".so"});
      std::string lib = tmp_ / ("build/cudnn/" + sub + ".so.9");
      build_shared(lib, "int " + sub.substr(3) + "_marker(void) { return 9; }", "-Wl,-soname," + sub + ".so.9", tmp_);
      files.push_back({"nvidia/cudnn/lib/" + sub + ".so.9", lib});
    }
    std::string shim = tmp_ / "build/cudnn/libcudnn.so.9";
    build_shared(shim, opener_source("cudnnCreate", entries, "\"Unable to load any of {%s}\\n\", list"),
                 "-Wl,-soname,libcudnn.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl", tmp_);
    files.push_back({"nvidia/cudnn/lib/libcudnn.so.9", shim});
    std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
    build_ext(ext, "_C", "int cudnnCreate(void);", "cudnnCreate()",
              quote(shim) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/cudnn/lib'");
    json paths = json::object();
    for (const auto& [arc, file] : files) paths[arc] = file;
    venv.install({platlib_wheel("nvidia-cudnn-cu12", "9.4.0.58", paths),
                  platlib_wheel("faketorch", "2.8.0", {{"faketorch/_C" + suffix_, ext}},
                                {{"faketorch/__init__.py", ""}}, {"nvidia-cudnn-cu12"})});
  }
};

TEST_F(RuntimeLoadsTest, CudnnSubLibraryDeletedFromTheWheel) {
  Venv venv(tmp_, "v");
  install_cudnn(venv);
  std::string dir = venv.site() + "/nvidia/cudnn/lib";
  // Intact: the call opens the wheel's own copies, and nothing is reported.
  CommandResult ok = call(venv, "faketorch._C");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(initialized(ok.err).count(dir + "/libcudnn_graph.so.9"), 1u) << ok.err;
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 0) << report.dump(1);
  EXPECT_TRUE(findings(report, "runtime-library-missing").empty()) << report.dump(1);

  fs::remove(dir + "/libcudnn_graph.so.9");
  EXPECT_EQ(venv.import("faketorch._C"), "");  // the import works; the first call does not
  CommandResult broken = call(venv, "faketorch._C");
  report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto found = findings(report, "runtime-library-missing");
  ASSERT_EQ(found.size(), 1u) << report.dump(1);
  const json& f = found[0];
  EXPECT_EQ(f["file"], dir + "/libcudnn.so.9");
  EXPECT_EQ(f["package"], "nvidia-cudnn-cu12");
  EXPECT_EQ(f["library"], "libcudnn_graph.so.9.4.0");
  EXPECT_EQ(f["caused_by"], json({{"code", "record-missing-file"},
                                  {"file", dir + "/libcudnn_graph.so.9"},
                                  {"package", "nvidia-cudnn-cu12"}}));
  EXPECT_EQ(f["fix_command"], findings(report, "record-missing-file")[0]["fix_command"]);
  // Where ld.so.cache has another copy (this machine's CUDA toolkit's cuDNN), the search falls
  // through to it, as the real call shows; elsewhere nothing is found and cuDNN says so.
  std::string system_copy;
  for (const std::string& path : initialized(broken.err))
    if (fs::path(path).filename() == "libcudnn_graph.so.9") system_copy = path;
  if (!system_copy.empty()) {
    EXPECT_EQ(broken.status, 0) << broken.err;
    EXPECT_EQ(f["severity"], "warning");
    EXPECT_EQ(f["message"], "libcudnn.so.9 opens libcudnn_graph.so.9 at run time from " + system_copy +
                                " (no package, found by ld.so.cache), not nvidia-cudnn-cu12's own copy");
  } else {
    EXPECT_EQ(broken.status, 1);
    EXPECT_EQ(f["severity"], "error");
    std::string words =
        "Unable to load any of {libcudnn_graph.so.9.4.0, libcudnn_graph.so.9.4, libcudnn_graph.so.9, libcudnn_graph.so}";
    EXPECT_NE(broken.err.find("\n" + words + "\n"), std::string::npos) << broken.err;
    EXPECT_EQ(f["message"], words);
  }

  // The cause's fix, pasted, brings the copy back: the call opens the wheel's copy again.
  CommandResult fixed = run("cd / && /bin/sh -c " + quote(f["fix_command"].get<std::string>()));
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  ok = call(venv, "faketorch._C");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(initialized(ok.err).count(dir + "/libcudnn_graph.so.9"), 1u) << ok.err;
}

// NVRTC opens the builtins of its own MAJOR.MINOR (12.4 for nvidia-cuda-nvrtc-cu12 12.4.127); a
// wheel whose builtins are another version's fails at the first compilation, in NVRTC's words.
TEST_F(RuntimeLoadsTest, NvrtcBuiltinsOfAnotherVersion) {
  const std::string words =
      "nvrtc: error: failed to open libnvrtc-builtins.so.12.4.\n  Make sure that libnvrtc-builtins.so.12.4 is installed "
      "correctly.";
  std::string nvrtc = tmp_ / "build/nvrtc/libnvrtc.so.12";
  build_shared(nvrtc,
               opener_source("nvrtcCompileProgram", {{"libnvrtc-builtins.so.12.4"}},
                             "\"nvrtc: error: failed to open %s.\\n  Make sure that %s is installed correctly.\\n\", "
                             "list, list"),
               "-Wl,-soname,libnvrtc.so.12 -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl", tmp_);
  std::string builtins = tmp_ / "build/nvrtc/libnvrtc-builtins.so.12.3";
  build_shared(builtins, "int __nvrtc_builtins__12_3_getArchBuiltins(void) { return 0; }",
               "-Wl,-soname,libnvrtc-builtins.so.12.3", tmp_);
  std::string ext = tmp_ / ("build/jit/_jit" + suffix_);
  build_ext(ext, "_jit", "int nvrtcCompileProgram(void);", "nvrtcCompileProgram()",
            quote(nvrtc) + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/cuda_nvrtc/lib'");
  Venv venv(tmp_, "v");
  venv.install({platlib_wheel("nvidia-cuda-nvrtc-cu12", "12.4.127",
                              {{"nvidia/cuda_nvrtc/lib/libnvrtc.so.12", nvrtc},
                               {"nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.3", builtins}}),
                platlib_wheel("jit", "1.0", {{"jit/_jit" + suffix_, ext}}, {{"jit/__init__.py", ""}},
                              {"nvidia-cuda-nvrtc-cu12"})});
  CommandResult real = call(venv, "jit._jit");
  EXPECT_EQ(real.status, 1);
  EXPECT_NE(real.err.find("\n" + words + "\n"), std::string::npos) << real.err;
  int status = -1;
  json report = venv.check(&status);
  EXPECT_EQ(status, 1);
  auto found = findings(report, "runtime-library-missing");
  ASSERT_EQ(found.size(), 1u) << report.dump(1);
  EXPECT_EQ(found[0]["message"], words);
  EXPECT_EQ(found[0]["library"], "libnvrtc-builtins.so.12.4");
  EXPECT_EQ(found[0]["severity"], "error");
  std::string dir = venv.site() + "/nvidia/cuda_nvrtc/lib";
  std::string hint = found[0]["hint"];
  EXPECT_NE(hint.find("; " + dir +
                      "/libnvrtc-builtins.so.12.3 (nvidia-cuda-nvrtc-cu12 12.4.127) is another version "
                      "than the one libnvrtc.so.12 asks for"),
            std::string::npos)
      << hint;
  EXPECT_FALSE(found[0].contains("caused_by"));

  // The words are NVRTC's own: the real libnvrtc of a CUDA 13.0 toolkit holds them, for its version.
  std::ifstream real_nvrtc("/usr/local/cuda-13.0/lib/libnvrtc.so.13", std::ios::binary);
  if (real_nvrtc) {
    std::stringstream bytes;
    bytes << real_nvrtc.rdbuf();
    EXPECT_NE(bytes.str().find("nvrtc: error: failed to open libnvrtc-builtins.so.13.0.\n  Make sure that "
                               "libnvrtc-builtins.so.13.0 is installed correctly."),
              std::string::npos);
  }
}

}  // namespace
}  // namespace envdoctor::test
