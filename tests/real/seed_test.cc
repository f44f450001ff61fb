// The two seeds with the real packages, in torch 2.11's CUDA 13 venv made by the real uv:
//
// 1. nvidia-cudnn-cu12 and -cu13 9.19.0.56 both installed. Both write
//    nvidia/cudnn/lib/libcudnn.so.9; uv's uninstall of either deletes every path its RECORD lists,
//    and `import torch` dies.
// 2. A CUDA 12 extension, built here by nvcc against the real libcudart.so.12 of NVIDIA's
//    nvidia-cuda-runtime-cu12 wheel, installed beside torch's CUDA 13 runtime; then the symlink
//    "fix" libcudart.so.12 -> libcudart.so.13.
//
// For the first, this machine's CUDA toolkit puts its own cuDNN in ld.so.cache (/usr/local/cuda-13.0/lib), where
// it would stand in for the deleted copy. The seed is the node a pip user has, without it: every
// step, envdoctor's and the referee's, runs in a mount namespace of its own where /etc/ld.so.cache
// is one ldconfig built from this machine's configuration less the CUDA toolkit's directories.
#include <algorithm>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

class RealSeed : public VenvTest {
 protected:
  void SetUp() override {
    VenvTest::SetUp();
    if (IsSkipped()) return;
    std::string why;
    uv_ = pinned_tool("uv", &why);
    if (uv_.empty() || corpus_wheel("torch", &why).empty() || corpus_wheel("nvidia-cudnn-cu12", &why).empty())
      GTEST_SKIP() << why;
    if (run("unshare -m true").status != 0) GTEST_SKIP() << "needs unshare -m (root, mount namespaces)";
    // The cache without the CUDA toolkit's directories.
    std::string conf = tmp_ / "ld.so.conf";
    CommandResult listed = run("cat /etc/ld.so.conf.d/*.conf | grep -v -i cuda > " + quote(conf) + " && ldconfig -C " +
                               quote(tmp_ / "ld.so.cache") + " -f " + quote(conf));
    ASSERT_EQ(listed.status, 0) << listed.err;
    // What a user's shell has: the pinned uv on PATH, its cache, envdoctor's records of index origins.
    env_ = "env PATH=" + quote(fs::path(uv_).parent_path().string() + ":/usr/bin:/bin") +
           " UV_CACHE_DIR=" + quote(test_cache_dir() + "/uv-cache") + " XDG_STATE_HOME=" + quote(tmp_ / "state") + " ";
  }

  // `command` on the node without the toolkit's cuDNN.
  CommandResult on_node(const std::string& command) const {
    return run("unshare -m sh -c " +
               quote("mount --bind " + quote(tmp_ / "ld.so.cache") + " /etc/ld.so.cache && cd / && " + env_ + command));
  }

  // Every file of the venv with its sha256, and every link with its target: one line each.
  std::string tree_hash(const std::string& dir) const {
    return run("cd " + quote(dir) +
               " && { find . -type f -print0 | sort -z | xargs -0 sha256sum; find . -type l -printf '%p -> %l\\n' "
               "| sort; }")
        .out;
  }

  // torch 2.11's CUDA venv at TMP/venv, with `more` requirements, through envdoctor's own guard
  // as a user would: uv's plan is checked, uv runs, and the index options that found each wheel
  // are kept for later fixes. --force: on a node without the toolkit in ld.so.cache, NVRTC 13's
  // wheel cannot open its own builtins at first compile (libnvrtc.so.13 has no RUNPATH), an error
  // the guard rightly reports: run by hand there, the real nvrtcCompileProgram fails with its words.
  Venv torch_venv(const std::string& more) {
    std::string dir = tmp_ / "venv";
    EXPECT_EQ(on_node("uv venv -q -p python3 " + quote(dir)).status, 0);
    CommandResult installed =
        on_node(quote(envdoctor()) + " uv pip --force install --python " + quote(dir + "/bin/python") +
                " --offline --no-index --find-links " + quote(corpus_dir()) + " torch==2.11.0 " + more);
    EXPECT_EQ(installed.status, 0) << installed.out << installed.err;
    return Venv::existing(dir);
  }

  // `envdoctor check --json` on the node, its document held to its schema.
  json check(const Venv& venv, const std::string& extra) const {
    CommandResult r = on_node(quote(envdoctor()) + " check --json --python " + quote(venv.python()) + " " + extra);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);
    return json::parse(r.out.empty() ? "{}" : r.out);
  }

  std::string uv_, env_;
};

TEST_F(RealSeed, TheSharedCudnnLibraryIsNamedTheUninstallRefusedAndItsFixRepairsTheRealOne) {
  Venv venv = torch_venv("nvidia-cudnn-cu12==9.19.0.56");
  if (HasFailure()) return;
  const std::string venv_dir = venv.dir(), py = venv.python();
  const std::string rel = "nvidia/cudnn/lib/libcudnn.so.9";
  const std::string lib = venv.site() + "/" + rel;
  ASSERT_TRUE(fs::exists(lib));
  EXPECT_EQ(on_node(quote(py) + " -c 'import torch'").status, 0);

  // Whose copy a file holds, by the referee: the sha256 each RECORD gives it. libcudnn.so.9 itself is
  // byte for byte the same in both wheels; libcudnn_adv.so.9 is not.
  const std::string adv = "nvidia/cudnn/lib/libcudnn_adv.so.9";
  CommandResult holder =
      run(quote(py) + " -c " +
          quote("import base64, hashlib, pathlib, sys\n"
                "site = pathlib.Path(sys.argv[1]); data = (site / sys.argv[2]).read_bytes()\n"
                "h = 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
                "for rec in site.glob('nvidia_cudnn_cu1*.dist-info/RECORD'):\n"
                "    if any(l.split(',')[:2] == [sys.argv[2], h] for l in rec.read_text().splitlines()):\n"
                "        print(rec.parent.name.split('-')[0].replace('_', '-'))\n") +
          " " + quote(venv.site()) + " " + quote(adv));
  ASSERT_EQ(holder.status, 0) << holder.err;
  ASSERT_EQ(count(holder.out, "\n"), 1u) << "not exactly one RECORD's hash matches " << adv << ": " << holder.out;
  std::string holds = holder.out.substr(0, holder.out.find('\n'));

  // check names the shared file, both owners, and whose copy it holds.
  json report = check(venv, "");
  std::vector<json> twice = findings(report, "file-owned-twice");
  auto shared = std::find_if(twice.begin(), twice.end(), [&](const json& f) { return f["file"] == lib; });
  ASSERT_NE(shared, twice.end()) << report.dump(1);
  EXPECT_EQ((*shared)["packages"], json({"nvidia-cudnn-cu12", "nvidia-cudnn-cu13"})) << shared->dump(1);
  auto adv_shared =
      std::find_if(twice.begin(), twice.end(), [&](const json& f) { return f["file"] == venv.site() + "/" + adv; });
  ASSERT_NE(adv_shared, twice.end()) << report.dump(1);
  EXPECT_NE((*adv_shared)["hint"].get<std::string>().find("the file now holds " + holds + "'s copy"), std::string::npos)
      << adv_shared->dump(1);

  // The guarded uninstall is refused, and not one file changes.
  std::string before = tree_hash(venv_dir);
  CommandResult guarded =
      on_node(quote(envdoctor()) + " uv pip uninstall --python " + quote(py) + " nvidia-cudnn-cu13");
  EXPECT_EQ(guarded.status, 1) << guarded.out << guarded.err;
  EXPECT_NE(guarded.out.find("Refused: this change would introduce"), std::string::npos) << guarded.out;
  EXPECT_EQ(tree_hash(venv_dir), before) << "the refused uninstall changed the venv";

  // The prediction: torch's first error, in the loader's words.
  json predicted = check(venv, "--without nvidia-cudnn-cu13");
  std::vector<std::string> torch_words;
  for (const json& f : new_findings(predicted))
    if (f["package"] == "torch" && f["severity"] == "error") torch_words.push_back(f["message"]);
  ASSERT_FALSE(torch_words.empty()) << predicted.dump(1);

  // The real uninstall, unguarded; the import fails with the words envdoctor printed.
  CommandResult removed = on_node("uv pip uninstall --python " + quote(py) + " nvidia-cudnn-cu13");
  ASSERT_EQ(removed.status, 0) << removed.err;
  EXPECT_FALSE(fs::exists(lib)) << "uv left the shared file";
  std::string failed = import_error(on_node(quote(py) + " -c 'import torch'"));
  EXPECT_EQ(failed, "libcudnn.so.9: cannot open shared object file: No such file or directory");
  EXPECT_NE(std::find(torch_words.begin(), torch_words.end(), failed), torch_words.end())
      << "the import says " << failed << "; envdoctor predicted " << testing::PrintToString(torch_words);

  // The fix envdoctor offers for torch's missing library now, pasted as it is, repairs the import.
  json after = check(venv, "");
  std::string fix;
  for (const json& f : findings(after, "missing-library"))
    if (f["package"] == "torch" && f["library"] == "libcudnn.so.9" && f.contains("fix_command")) fix = f["fix_command"];
  ASSERT_FALSE(fix.empty()) << after.dump(1);
  CommandResult pasted = on_node("bash -c " + quote(fix) + " </dev/null");
  EXPECT_EQ(pasted.status, 0) << fix << "\n" << pasted.out << pasted.err;
  EXPECT_TRUE(fs::exists(lib)) << fix;
  EXPECT_EQ(import_error(on_node(quote(py) + " -c 'import torch'")), "") << "after `" << fix << "`";
}

// The second seed. The extension's RUNPATH names torch's CUDA 13 runtime directory, where a
// prebuilt CUDA 12 wheel expects to find the runtime torch loads.
TEST_F(RealSeed, ACuda12ExtensionIsPredictedBeforeTheInstallAndTheSymlinkGivesLdSosVersionError) {
  if (!have_tool("nvcc") && !fs::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "needs nvcc (the CUDA toolkit)";
  std::string why, runtime12 = corpus_wheel("nvidia-cuda-runtime-cu12", &why);
  if (runtime12.empty()) GTEST_SKIP() << why;
  // NVIDIA's CUDA 12 runtime, from its wheel, to link against.
  std::string unpacked = tmp_ / "cu12";
  ASSERT_EQ(run("unzip -q -o " + quote(runtime12) + " -d " + quote(unpacked)).status, 0);
  std::string cudart = unpacked + "/nvidia/cuda_runtime";
  std::string source =
      tmp_.write("ext.cu",
                 "#include <Python.h>\n#include <cuda_runtime.h>\n"
                 "__global__ void fill(int* p) { p[threadIdx.x] = threadIdx.x; }\n"
                 "static PyObject* launch(PyObject*, PyObject*) {\n"
                 "  fill<<<1, 32>>>(nullptr);\n  return PyLong_FromLong(cudaGetLastError());\n}\n"
                 "static PyMethodDef methods[] = {{\"launch\", launch, METH_NOARGS, \"\"}, {}};\n"
                 "static PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_cc\", nullptr, -1, methods};\n"
                 "PyMODINIT_FUNC PyInit__cc(void) { return PyModule_Create(&module); }\n");
  std::string ext = tmp_ / ("build/_cc" + suffix_);
  fs::create_directories(tmp_ / "build");
  std::string nvcc = have_tool("nvcc") ? "nvcc" : "/usr/local/cuda/bin/nvcc";
  CommandResult built =
      run(nvcc + " -shared -Xcompiler -fPIC -arch=sm_80 -cudart none -I" + quote(include_) + " -I" +
          quote(cudart + "/include") + " " + quote(source) + " -o " + quote(ext) + " -L" + quote(cudart + "/lib") +
          " -l:libcudart.so.12 -Xlinker -rpath -Xlinker " + quote("$ORIGIN/../nvidia/cu13/lib"));
  ASSERT_EQ(built.status, 0) << built.err;
  std::string wheel = platlib_wheel("cc12-extension", "1.0", {{"cc12/_cc" + suffix_, ext}}, {{"cc12/__init__.py", ""}});

  Venv venv = torch_venv("");
  if (HasFailure()) return;
  std::string module_file = venv.site() + "/cc12/_cc" + suffix_;
  // Before the install: the failed import, predicted.
  json predicted = check(venv, "--with " + quote(wheel));
  std::vector<json> fresh;
  for (const json& f : new_findings(predicted))
    if (f["severity"] == "error") fresh.push_back(f);
  ASSERT_EQ(fresh.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(fresh[0]["code"], "missing-library");
  EXPECT_EQ(fresh[0]["library"], "libcudart.so.12");
  EXPECT_EQ(fresh[0]["file"], module_file);

  CommandResult installed =
      on_node("uv pip install -q --no-deps --offline --python " + quote(venv.python()) + " " + quote(wheel));
  ASSERT_EQ(installed.status, 0) << installed.err;
  EXPECT_EQ(import_error(on_node(quote(venv.python()) + " -c 'import cc12._cc'")),
            fresh[0]["message"].get<std::string>());

  // The symlink "fix": ld.so now finds a libcudart.so.12 that defines no version libcudart.so.12.
  std::string cu13 = venv.site() + "/nvidia/cu13/lib";
  fs::create_symlink("libcudart.so.13", cu13 + "/libcudart.so.12");
  std::string failed = import_error(on_node(quote(venv.python()) + " -c 'import cc12._cc'"));
  // The path as ld.so opens it: through the extension's RUNPATH, $ORIGIN/../nvidia/cu13/lib.
  EXPECT_EQ(failed, venv.site() +
                        "/cc12/../nvidia/cu13/lib/libcudart.so.12: version `libcudart.so.12' not found "
                        "(required by " +
                        module_file + ")");
  json after = check(venv, "");
  std::vector<json> version = findings(after, "missing-version");
  auto word_for_word =
      std::find_if(version.begin(), version.end(), [&](const json& f) { return f["message"] == failed; });
  EXPECT_NE(word_for_word, version.end()) << after.dump(1);
}

}  // namespace
}  // namespace envdoctor::test
