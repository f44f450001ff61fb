// Libraries opened at run time by name (issue 31, item 1; the opener rules of data/package_loads.json). A cuDNN-shaped
// wheel: libcudnn.so.9 (RUNPATH $ORIGIN) opens its sub-libraries by name when first called, and the
// graph library its engines, trying NAME.so.9.4.0, NAME.so.9.4, NAME.so.9 and NAME.so as cuDNN 9
// does, and each prints cuDNN's words when none loads; an NVRTC-shaped wheel whose libnvrtc.so.12 opens the builtins of
// its own version. The referees: the real call from an extension module (`python -c "import m; m.f()"`) with
// LD_DEBUG=libs, which shows the file the dlopen took, and the words the library prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "fixtures/venv.h"

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
  // called, and prints `formats[i]` (a printf format and its arguments, of `list`: the names
  // tried) when none of entry i loads. `then`: a function of the first entry's library, called
  // once it loaded (cuDNN's graph library opens the engines when used).
  static std::string opener_source(const std::string& function, const std::vector<std::vector<std::string>>& entries,
                                   const std::vector<std::string>& formats, const std::string& then = "") {
    std::string table, fails;
    for (size_t i = 0; i < entries.size(); ++i) {
      table += "{";
      for (const std::string& n : entries[i]) table += "\"" + n + "\", ";
      table += "0},";
      fails += "    if (!h && i == " + std::to_string(i) + ") { fprintf(stderr, " + formats[i] + "); return 1; }\n";
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
           "    }\n" +
           fails +
           (then.empty() ? ""
                         : "    if (i == 0) { int (*f)(void) = (int (*)(void))dlsym(h, \"" + then +
                               "\"); if (f && f()) return 1; }\n") +
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
  // faketorch, whose _C.f() calls cudnnGetVersion. As cuDNN 9 does (data/package_loads.json): the
  // shim opens graph, ops, cnn and adv, and the graph library opens the engines and heuristics.
  void install_cudnn(const Venv& venv) {
    auto names = [](const std::string& sub) {
      return std::vector<std::string>{sub + ".so.9.4.0", sub + ".so.9.4", sub + ".so.9", sub + ".so"};
    };
    std::vector<std::pair<std::string, std::string>> files;
    const std::string flags = " -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl";
    for (const std::string& sub : kSubLibraries) {
      if (sub == "libcudnn_graph") continue;
      std::string lib = tmp_ / ("build/cudnn/" + sub + ".so.9");
      build_shared(lib, "int " + sub.substr(3) + "_marker(void) { return 9; }", "-Wl,-soname," + sub + ".so.9", tmp_);
      files.push_back({"nvidia/cudnn/lib/" + sub + ".so.9", lib});
    }
    const std::string unable = "\"Unable to load any of {%s}.\\n\", list";
    std::string graph = tmp_ / "build/cudnn/libcudnn_graph.so.9";
    build_shared(graph,
                 opener_source("cudnn_graph_plan",
                               {names("libcudnn_engines_precompiled"), names("libcudnn_engines_runtime_compiled"),
                                names("libcudnn_heuristic")},
                               {unable, unable, unable}),
                 "-Wl,-soname,libcudnn_graph.so.9" + flags, tmp_);
    files.push_back({"nvidia/cudnn/lib/libcudnn_graph.so.9", graph});
    auto cannot = [](const std::string& symbol) { return "\"Invalid handle. Cannot load symbol " + symbol + "\\n\""; };
    std::string shim = tmp_ / "build/cudnn/libcudnn.so.9";
    build_shared(
        shim,
        opener_source("cudnnGetVersion",
                      {names("libcudnn_graph"), names("libcudnn_ops"), names("libcudnn_cnn"), names("libcudnn_adv")},
                      {cannot("cudnnGetVersion"), cannot("cudnnCreateTensorDescriptor"),
                       cannot("cudnnCreateConvolutionDescriptor"), cannot("cudnnCreateRNNDescriptor")},
                      "cudnn_graph_plan"),
        "-Wl,-soname,libcudnn.so.9" + flags, tmp_);
    files.push_back({"nvidia/cudnn/lib/libcudnn.so.9", shim});
    std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
    build_ext(ext, "_C", "int cudnnGetVersion(void);", "cudnnGetVersion()",
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
    std::string words = "Invalid handle. Cannot load symbol cudnnGetVersion";
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

// The graph library's own row: an engine library deleted from the wheel is reported on
// libcudnn_graph.so.9, the library that opens it, with what the real call then takes.
TEST_F(RuntimeLoadsTest, CudnnEngineDeletedIsTheGraphLibrarys) {
  Venv venv(tmp_, "v");
  install_cudnn(venv);
  std::string dir = venv.site() + "/nvidia/cudnn/lib";
  fs::remove(dir + "/libcudnn_engines_precompiled.so.9");
  CommandResult real = call(venv, "faketorch._C");
  int status = -1;
  json report = venv.check(&status);
  auto found = findings(report, "runtime-library-missing");
  ASSERT_EQ(found.size(), 1u) << report.dump(1);
  const json& f = found[0];
  EXPECT_EQ(f["file"], dir + "/libcudnn_graph.so.9");
  EXPECT_EQ(f["library"], "libcudnn_engines_precompiled.so.9.4.0");
  EXPECT_EQ(f["caused_by"]["file"], dir + "/libcudnn_engines_precompiled.so.9");
  std::string system_copy;
  for (const std::string& path : initialized(real.err))
    if (fs::path(path).filename() == "libcudnn_engines_precompiled.so.9") system_copy = path;
  if (!system_copy.empty()) {
    EXPECT_EQ(f["severity"], "warning");
    EXPECT_EQ(f["message"], "libcudnn_graph.so.9 opens libcudnn_engines_precompiled.so.9 at run time from " +
                                system_copy + " (no package, found by ld.so.cache), not nvidia-cudnn-cu12's own copy");
  } else {
    std::string words =
        "Unable to load any of {libcudnn_engines_precompiled.so.9.4.0, libcudnn_engines_precompiled.so.9.4, "
        "libcudnn_engines_precompiled.so.9, libcudnn_engines_precompiled.so}.";
    EXPECT_EQ(real.status, 1);
    EXPECT_NE(real.err.find("\n" + words + "\n"), std::string::npos) << real.err;
    EXPECT_EQ(f["severity"], "error");
    EXPECT_EQ(f["message"], words);
  }
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
                             {"\"nvrtc: error: failed to open %s.\\n  Make sure that %s is installed correctly.\\n\", "
                              "list, list"}),
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

// The cuDNN rows against a real cuDNN 9 (the CUDA toolkit's, where the machine has one): the
// shim alone in a directory, run with `ld.so --inhibit-cache` so that no other copy is found,
// tries the names the table gives in its order (LD_DEBUG=libs) and prints the row's words; each
// library holds the names its row says it opens, and the graph library holds its row's words.
TEST(RuntimeLoadsReal, CudnnRowsAreWhatCudnnDoes) {
  const std::string lib = "/usr/local/cuda-13.0/lib";
  if (!fs::exists(lib + "/libcudnn.so.9") || !fs::exists(lib + "/libcudnn_graph.so.9") || !have_tool("gcc"))
    GTEST_SKIP() << "needs the CUDA toolkit's cuDNN 9 in " << lib << " and gcc";
  json table = json::parse(std::ifstream(std::string(ENVDOCTOR_SOURCE_DIR) + "/data/package_loads.json"));
  auto rule = [&](const std::string& opener) {
    for (const json& r : table["rules"])
      if (r.value("opener", "") == opener) return r;
    return json();
  };
  auto bytes = [](const std::string& path) {
    std::stringstream out;
    out << std::ifstream(path, std::ios::binary).rdbuf();
    return out.str();
  };
  // The last name of each step, the unversioned one, is spelled out in the opener.
  for (const std::string opener : {"libcudnn.so.9", "libcudnn_graph.so.9"}) {
    json r = rule(opener);
    ASSERT_TRUE(r.is_object()) << opener;
    std::string content = bytes(lib + "/" + opener);
    for (const json& step : r["steps"]) {
      std::string last = step["names"].back();
      EXPECT_NE(content.find(last + '\0'), std::string::npos) << opener << " " << last;
    }
  }
  EXPECT_EQ(rule("libcudnn_graph.so.9")["steps"][0]["missing"]["raise"], "Unable to load any of {{{tried}}}.");
  EXPECT_NE(bytes(lib + "/libcudnn_graph.so.9").find("Unable to load any of {%s, %s, %s, %s}."), std::string::npos);

  TempDir tmp;
  fs::copy_file(lib + "/libcudnn.so.9", tmp / "libcudnn.so.9");
  std::string prog = tmp / "call";
  CommandResult built = run("printf '%s' " +
                            quote("#include <dlfcn.h>\n#include <stddef.h>\nint main(int c, char** v) {\n"
                                  "  void* h = dlopen(v[1], RTLD_NOW);\n  if (!h) return 2;\n"
                                  "  size_t (*f)(void) = (size_t (*)(void))dlsym(h, \"cudnnGetVersion\");\n"
                                  "  return f && f() ? 0 : 1;\n}\n") +
                            " | gcc -x c -o " + quote(prog) + " - -ldl");
  ASSERT_EQ(built.status, 0) << built.err;
  CommandResult r = run("env LD_DEBUG=libs /lib64/ld-linux-x86-64.so.2 --inhibit-cache " + quote(prog) + " " +
                        quote(tmp / "libcudnn.so.9"));
  json graph = rule("libcudnn.so.9")["steps"][0];
  EXPECT_EQ(graph["missing"]["raise"], "Invalid handle. Cannot load symbol cudnnGetVersion");
  EXPECT_NE(r.err.find("\nInvalid handle. Cannot load symbol cudnnGetVersion\n"), std::string::npos) << r.err;
  // The names tried: the rule's first step, cuDNN's own version put in (9.N.M) as the engine puts
  // the distribution's in.
  std::vector<std::string> tried;
  for (size_t at = r.err.find("find library=libcudnn_graph"); at != std::string::npos;
       at = r.err.find("find library=libcudnn_graph", at + 1))
    tried.push_back(r.err.substr(at + 13, r.err.find(' ', at + 13) - at - 13));
  ASSERT_EQ(tried.size(), 4u) << r.err;
  std::string version = tried[0].substr(std::string("libcudnn_graph.so.").size());  // "9.19.0"
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    size_t dot = version.find('.', at);
    parts.push_back(version.substr(at, dot == std::string::npos ? std::string::npos : dot - at));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  ASSERT_EQ(parts.size(), 3u) << version;
  std::vector<std::string> expected;
  for (std::string name : graph["names"].get<std::vector<std::string>>()) {
    for (size_t i = 0; i < 3; ++i) {
      std::string key = "{v." + std::to_string(i + 1) + "}";
      if (size_t at = name.find(key); at != std::string::npos) name.replace(at, key.size(), parts[i]);
    }
    expected.push_back(name);
  }
  EXPECT_EQ(tried, expected) << r.err;
}

}  // namespace
}  // namespace envdoctor::test
