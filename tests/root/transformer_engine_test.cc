// TransformerEngine's own loads at import, as the rules transformer-engine-* of
// data/package_loads.json say them (one per shape of its releases: 2.11 and later, one search for
// every library; 2.4 to 2.10, a function per library), refereed by the import itself in a chroot:
// a root with Debian's python3 and /sbin/ldconfig (fixtures/chroot_venv.h), a venv holding a
// transformer_engine whose common/__init__.py has a release's shape (written in this test's words,
// support/transformer_engine_source.h for 2.4 to 2.10), NVIDIA-shaped wheels of CUDA 12 built by
// gcc, each library telling which copy it is (where()), and a CUDA toolkit under /usr/local/cuda
// where a case needs one. The messages are compared with the last line of the real traceback, the
// copy the model says TE loads with the one the process really serves, and each variable a hint
// offers with the import it makes pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "fixtures/chroot_venv.h"
#include "fixtures/fixture.h"
#include "fixtures/schema.h"
#include "fixtures/transformer_engine_source.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TransformerEngineLoads : public ChrootVenv {};

// A library `soname` whose where() returns `copy`, built at `path`.
void where_library(const TempDir& tmp, const std::string& path, const std::string& soname, int copy,
                   const std::string& flags = "") {
  fs::create_directories(fs::path(path).parent_path());
  build_shared(path, "int where(void) { return " + std::to_string(copy) + "; }", "-Wl,-soname," + soname + " " + flags,
               tmp);
}

// The last line of a traceback.
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(text.rfind('\n') + 1);
}

// `name` `version`'s wheel (platform-specific, `files` and `paths` in it), unpacked into `site`.
void install_unpacked(const TempDir& tmp, const std::string& site, const std::string& name, const std::string& version,
                      const json& files, const json& paths) {
  fs::create_directories(tmp / "wheels");
  std::string wheel = make_wheel(tmp / "wheels", {{"name", name},
                                                  {"version", version},
                                                  {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                  {"purelib", false},
                                                  {"files", files},
                                                  {"paths", paths}});
  sh("python3 -m zipfile -e " + quote(wheel) + " " + quote(site));
}

// transformer_engine `version` with `init` as its common/__init__.py, and the CUDA 12 wheels of the
// libraries it loads, each library its copy 1.
void install_te(const TempDir& tmp, const std::string& site, const std::string& version, const std::string& init) {
  install_unpacked(tmp, site, "transformer_engine", version,
                   {{"transformer_engine/__init__.py", "import transformer_engine.common\n"},
                    {"transformer_engine/common/__init__.py", init}},
                   json::object());
  for (auto [name, version, folder, soname] :
       {std::tuple<std::string, std::string, std::string, std::string>{"nvidia-cudnn-cu12", "9.1.0.70",
                                                                       "nvidia/cudnn/lib", "libcudnn.so.9"},
        {"nvidia-cuda-nvrtc-cu12", "12.8.61", "nvidia/cuda_nvrtc/lib", "libnvrtc.so.12"},
        {"nvidia-curand-cu12", "10.3.9.55", "nvidia/curand/lib", "libcurand.so.10"},
        {"nvidia-cublas-cu12", "12.8.3.14", "nvidia/cublas/lib", "libcublas.so.12"},
        {"nvidia-cuda-runtime-cu12", "12.8.57", "nvidia/cuda_runtime/lib", "libcudart.so.12"}}) {
    std::string built = tmp / ("build/" + soname);
    where_library(tmp, built, soname, 1);
    install_unpacked(tmp, site, name, version, json::object(), {{folder + "/" + soname, built}});
  }
}

// envdoctor's findings for transformer_engine in `root`'s venv, with `variables` set.
std::vector<json> te_findings(const std::string& root, const std::string& variables, std::string* report) {
  CommandResult r = run("env -u CUDA_HOME -u CUDA_PATH -u LD_LIBRARY_PATH " + variables + " " + quote(envdoctor()) +
                        " check --json --root " + quote(root) + " --prefix /opt/venv");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  expect_schema_valid("check", r.out);
  std::vector<json> out;
  json parsed = json::parse(r.out);
  for (const json& f : parsed["findings"])
    if (f["package"] == "transformer_engine") out.push_back(f);
  *report = r.out;
  return out;
}

TEST_F(TransformerEngineLoads, TheImportsOwnSearchInItsOwnWords) {
  install_te(tmp, site, "2.11.0", te_shared_init());
  auto te = [&](const std::string& variables, std::string* report) { return te_findings(root, variables, report); };
  std::string report;
  const std::string nvidia = venv_site + "/nvidia";

  // No toolkit: NVRTC and cuRAND come from the wheels, so cudart must too, from folders that
  // CUDA 12's nvidia/cuda_runtime/lib is not one of.
  CommandResult plain = in_root(root, "import transformer_engine");
  EXPECT_EQ(last_line(plain.err), "RuntimeError: cudart shared object not found.") << plain.err;
  std::vector<json> found = te("", &report);
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["code"], "runtime-library-missing");
  EXPECT_EQ(found[0]["severity"], "error");
  EXPECT_EQ(found[0]["file"], venv_site + "/transformer_engine/common/__init__.py");
  EXPECT_EQ(found[0]["message"], last_line(plain.err));
  std::string hint = found[0]["hint"];
  std::string variable = "NVRTC_HOME=" + nvidia + "/cuda_nvrtc/lib";
  EXPECT_NE(hint.find("set " + variable + " before starting Python"), std::string::npos) << hint;
  // A project build skips the loads unless NVTE_RELEASE_BUILD is true to int(): for TE and the model.
  for (const std::string variables : {"NVTE_PROJECT_BUILDING=1", "NVTE_PROJECT_BUILDING=1 NVTE_RELEASE_BUILD=' 0_0'"}) {
    EXPECT_EQ(in_root(root, "import transformer_engine", variables).status, 0) << variables;
    EXPECT_TRUE(te(variables, &report).empty()) << variables << report;
  }
  CommandResult release = in_root(root, "import transformer_engine", "NVTE_PROJECT_BUILDING=1 NVTE_RELEASE_BUILD=1");
  EXPECT_EQ(last_line(release.err), "RuntimeError: cudart shared object not found.") << release.err;
  EXPECT_EQ(te("NVTE_PROJECT_BUILDING=1 NVTE_RELEASE_BUILD=1", &report).size(), 1u) << report;
  // A value int() refuses: the import raises ValueError before the loads, which the rule does not
  // model, so it gives no verdict.
  CommandResult refused = in_root(root, "import transformer_engine", "NVTE_PROJECT_BUILDING=1 NVTE_RELEASE_BUILD=x");
  EXPECT_EQ(last_line(refused.err), "ValueError: invalid literal for int() with base 10: 'x'") << refused.err;
  EXPECT_TRUE(te("NVTE_PROJECT_BUILDING=1 NVTE_RELEASE_BUILD=x", &report).empty()) << report;
  // CUDA 13's layout, every library in nvidia/cu13/lib: the strict loads take cudart from there
  // (lib{lib}*.so.*[0-9] in that folder, the others' lib*.so.*[0-9] in theirs), and the import passes.
  std::string cudart13 = tmp / "build/libcudart.so.13";
  where_library(tmp, cudart13, "libcudart.so.13", 1);
  install_unpacked(tmp, site, "nvidia-cuda-runtime", "13.0.96", json::object(),
                   {{"nvidia/cu13/lib/libcudart.so.13", cudart13}});
  CommandResult cu13 = in_root(root, "import transformer_engine");
  EXPECT_EQ(cu13.status, 0) << cu13.err;
  EXPECT_TRUE(te("", &report).empty()) << report;
  fs::remove_all(site + "/nvidia/cu13");
  for (const fs::directory_entry& e : fs::directory_iterator(site))
    if (e.path().filename().string().starts_with("nvidia_cuda_runtime-")) fs::remove_all(e.path());
  // The variable the hint offers: the import passes, and the model says so.
  CommandResult fixed = in_root(root, "import transformer_engine", variable);
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_TRUE(te(variable, &report).empty()) << report;

  // The wheel's cuDNN deleted: none of TE's places holds one.
  fs::rename(site + "/nvidia/cudnn/lib/libcudnn.so.9", tmp / "libcudnn.so.9");
  CommandResult no_cudnn = in_root(root, "import transformer_engine", variable);
  EXPECT_EQ(last_line(no_cudnn.err), "RuntimeError: cudnn shared object not found.") << no_cudnn.err;
  found = te(variable, &report);
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["message"], last_line(no_cudnn.err));
  // Its cause is the file missing where nvidia-cudnn-cu12's RECORD puts it; the fix is that one's.
  ASSERT_TRUE(found[0].contains("caused_by")) << found[0].dump(1);
  EXPECT_EQ(found[0]["caused_by"]["code"], "record-missing-file");
  EXPECT_EQ(found[0]["caused_by"]["file"], nvidia + "/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(found[0]["caused_by"]["package"], "nvidia-cudnn-cu12");
  fs::rename(tmp / "libcudnn.so.9", site + "/nvidia/cudnn/lib/libcudnn.so.9");

  // A toolkit: lib64 a link to targets/x86_64-linux/lib, which holds cuDNN 9.1.0 (copy 3), a
  // separate libcudnn.so.9 (copy 2) that sorts after it, a stub that would sort first (copy 4),
  // and NVRTC (copy 3). TE takes the toolkit's copies, with RTLD_GLOBAL, ahead of the wheels'.
  std::string cuda = root + "/usr/local/cuda-12.8", lib = cuda + "/targets/x86_64-linux/lib";
  where_library(tmp, lib + "/libcudnn.so.9.1.0", "libcudnn.so.9", 3);
  where_library(tmp, lib + "/libcudnn.so.9", "libcudnn.so.9", 2);
  where_library(tmp, lib + "/stubs/libcudnn.so.99", "libcudnn.so.9", 4);
  where_library(tmp, lib + "/libnvrtc.so.12", "libnvrtc.so.12", 3);
  fs::create_directory_symlink("targets/x86_64-linux/lib", cuda + "/lib64");
  fs::create_directory_symlink("/usr/local/cuda-12.8", root + "/usr/local/cuda");
  const std::string served =
      "import transformer_engine, ctypes\n"
      "print(ctypes.CDLL('libcudnn.so.9').where(), ctypes.CDLL('libnvrtc.so.12').where(), "
      "end='')";
  CommandResult toolkit = in_root(root, served);
  ASSERT_EQ(toolkit.status, 0) << toolkit.err;
  EXPECT_EQ(toolkit.out, "3 3");
  found = te("", &report);
  ASSERT_EQ(found.size(), 2u) << report;
  for (const json& f : found) EXPECT_EQ(f["severity"], "warning") << f.dump(1);
  json on_cudnn = found[0]["library"] == "libcudnn.so.9" ? found[0] : found[1];
  std::string message = on_cudnn["message"];
  EXPECT_NE(message.find("/libcudnn.so.9.1.0 (no package, found by /usr/local/cuda)"), std::string::npos) << message;
  EXPECT_NE(message.find("not nvidia-cudnn-cu12's " + nvidia + "/cudnn/lib/libcudnn.so.9"), std::string::npos)
      << message;
  std::string own = "CUDNN_HOME=" + nvidia + "/cudnn/lib";
  EXPECT_NE(on_cudnn["hint"].get<std::string>().find("set " + own + " before starting Python"), std::string::npos)
      << on_cudnn.dump(1);
  CommandResult wheel_first = in_root(root, served, own);
  ASSERT_EQ(wheel_first.status, 0) << wheel_first.err;
  EXPECT_EQ(wheel_first.out, "1 3");

  // The copy TE picks does not load: the import ends in its dlerror, word for word.
  build_shared(tmp / "build/libcurand_dep.so", "int dep(void) { return 0; }", "-Wl,-soname,libcurand_dep.so", tmp);
  where_library(tmp, lib + "/libcurand.so.10", "libcurand.so.10", 3,
                "-Wl,--no-as-needed " + quote(tmp / "build/libcurand_dep.so"));
  CommandResult broken = in_root(root, "import transformer_engine");
  EXPECT_EQ(last_line(broken.err),
            "OSError: libcurand_dep.so: cannot open shared object file: No such file or directory")
      << broken.err;
  found = te("", &report);
  std::vector<json> errors;
  for (const json& f : found)
    if (f["severity"] == "error") errors.push_back(f);
  ASSERT_EQ(errors.size(), 1u) << report;
  EXPECT_EQ(errors[0]["message"], last_line(broken.err));
}

// The "set X=Y before starting Python" a hint offers, as X=Y; "" where it offers none.
std::string offered_variable(const std::string& hint) {
  size_t at = hint.find("set "), end = hint.find(" before starting Python");
  return at == std::string::npos || end == std::string::npos || end < at ? "" : hint.substr(at + 4, end - at - 4);
}

// TransformerEngine 2.4 to 2.10, whose functions of their own for each library ask ldconfig
// through `ldconfig -p | grep` in a shell (2.6 to 2.9) or read every line of `ldconfig -p`
// (2.10), refereed by the import in the chroot, whose PATH (/usr/bin:/bin) does not hold its
// /sbin/ldconfig: the messages to the letter, the copy each library loads, and each fix offered.
TEST_F(TransformerEngineLoads, PerLibraryReleasesInTheirOwnWords) {
  // The shell and grep that the pipeline runs, with what grep needs.
  sh("R=" + quote(root) + "; cp /bin/dash $R/usr/bin/sh; cp /bin/grep $R/usr/bin/grep" +
     "; for l in $(ldd /bin/grep | awk '/=>/ {print $3}'); do cp -L $l $R/usr/lib/x86_64-linux-gnu/; done");
  install_te(tmp, site, "2.8.0", te_per_library_init({}));
  const std::string chroot_path = "PATH=/usr/bin:/bin", with_sbin = "PATH=/usr/bin:/bin:/sbin";
  std::string report;
  // envdoctor runs with the PATH the import has, since the model reads it from its own process.
  auto te = [&](const std::string& variables) { return te_findings(root, chroot_path + " " + variables, &report); };
  auto errors = [&](const std::string& variables) {
    std::vector<json> out;
    for (const json& f : te(variables))
      if (f["severity"] == "error") out.push_back(f);
    return out;
  };
  const std::string nvidia = venv_site + "/nvidia", import = "import transformer_engine";
  const std::string served =
      "import transformer_engine, ctypes\n"
      "print(ctypes.CDLL('libcudnn.so.9').where(), ctypes.CDLL('libnvrtc.so.12').where(), end='')";

  // Every library from its wheel.
  CommandResult wheels = in_root(root, served);
  ASSERT_EQ(wheels.status, 0) << wheels.err;
  EXPECT_EQ(wheels.out, "1 1");
  EXPECT_TRUE(te("").empty()) << report;

  // The wheel's cuDNN deleted: its folder holds none, and the shell finds no ldconfig on PATH,
  // so grep reads nothing and its status 1 raises before the dlopen that LD_LIBRARY_PATH takes
  // part in.
  fs::rename(site + "/nvidia/cudnn/lib/libcudnn.so.9", tmp / "libcudnn.so.9");
  CommandResult lost = in_root(root, import);
  EXPECT_EQ(
      last_line(lost.err),
      "subprocess.CalledProcessError: Command 'ldconfig -p | grep 'libcudnn.so'' returned non-zero exit status 1.")
      << lost.err;
  std::vector<json> found = te("");
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["code"], "runtime-library-missing");
  EXPECT_EQ(found[0]["message"], last_line(lost.err));
  ASSERT_TRUE(found[0].contains("caused_by")) << found[0].dump(1);
  EXPECT_EQ(found[0]["caused_by"]["code"], "record-missing-file");
  EXPECT_EQ(found[0]["caused_by"]["file"], nvidia + "/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(found[0]["caused_by"]["package"], "nvidia-cudnn-cu12");
  // With /sbin on PATH, ldconfig prints the root's cache, which names no cuDNN: the same.
  EXPECT_EQ(last_line(in_root(root, import, with_sbin).err), last_line(lost.err));
  found = te_findings(root, with_sbin, &report);
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["message"], last_line(lost.err));

  // A cuDNN that the cache names (copy 5, /opt/drv in ld.so.conf): taken from its line where
  // ldconfig is on PATH; off PATH, the import still fails, and the fix the hint offers works.
  where_library(tmp, root + "/opt/drv/libcudnn.so.9", "libcudnn.so.9", 5);
  sh("ldconfig -r " + quote(root));
  CommandResult cached = in_root(root, served, with_sbin);
  ASSERT_EQ(cached.status, 0) << cached.err;
  EXPECT_EQ(cached.out, "5 1");
  EXPECT_TRUE(te_findings(root, with_sbin, &report).empty()) << report;
  fs::remove_all(site + "/nvidia/cudnn");
  for (const fs::directory_entry& e : fs::directory_iterator(site))
    if (e.path().filename().string().starts_with("nvidia_cudnn_cu12-")) fs::remove_all(e.path());
  CommandResult uninstalled = in_root(root, import);
  EXPECT_EQ(last_line(uninstalled.err), last_line(lost.err)) << uninstalled.err;
  found = errors("");
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["message"], last_line(uninstalled.err));
  EXPECT_FALSE(found[0].contains("caused_by")) << found[0].dump(1);
  std::string fix = offered_variable(found[0]["hint"]);
  ASSERT_FALSE(fix.empty()) << found[0].dump(1);
  CommandResult fixed = in_root(root, import, fix);
  EXPECT_EQ(fixed.status, 0) << fix << "\n" << fixed.err;
  EXPECT_TRUE(errors(fix).empty()) << fix << report;

  // 2.10's file in its place: it runs ["ldconfig", "-p"] itself, which raises FileNotFoundError
  // off PATH, and on it gives the cache's line.
  for (const fs::directory_entry& e : fs::directory_iterator(site))
    if (e.path().filename().string().starts_with("transformer_engine-")) fs::remove_all(e.path());
  install_unpacked(
      tmp, site, "transformer_engine", "2.10.0",
      {{"transformer_engine/__init__.py", "import transformer_engine.common\n"},
       {"transformer_engine/common/__init__.py", te_per_library_init({false, true, false, true, true, true})}},
      json::object());
  CommandResult listed = in_root(root, import);
  EXPECT_EQ(last_line(listed.err), "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'") << listed.err;
  found = errors("");
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["message"], last_line(listed.err));
  CommandResult listed_on_path = in_root(root, served, with_sbin);
  ASSERT_EQ(listed_on_path.status, 0) << listed_on_path.err;
  EXPECT_EQ(listed_on_path.out, "5 1");
  EXPECT_TRUE(te_findings(root, with_sbin, &report).empty()) << report;

  // The cuDNN wheel reinstalled, and a toolkit's cuDNN (copy 3) under /usr/local/cuda, which TE
  // globs before the wheels: it serves libcudnn.so.9 to the process ahead of the wheel's copy.
  std::string built = tmp / "build/libcudnn.so.9";
  where_library(tmp, built, "libcudnn.so.9", 1);
  install_unpacked(tmp, site, "nvidia-cudnn-cu12", "9.1.0.70", json::object(),
                   {{"nvidia/cudnn/lib/libcudnn.so.9", built}});
  where_library(tmp, root + "/usr/local/cuda/lib64/libcudnn.so.9", "libcudnn.so.9", 3);
  CommandResult toolkit = in_root(root, served);
  ASSERT_EQ(toolkit.status, 0) << toolkit.err;
  EXPECT_EQ(toolkit.out, "3 1");
  found = te("");
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["severity"], "warning");
  EXPECT_NE(found[0]["message"].get<std::string>().find("/usr/local/cuda/lib64/libcudnn.so.9 (no package, found by "
                                                        "/usr/local/cuda)"),
            std::string::npos)
      << found[0].dump(1);
  std::string own = offered_variable(found[0]["hint"]);
  EXPECT_EQ(own, "CUDNN_HOME=" + nvidia + "/cudnn/lib") << found[0].dump(1);
  CommandResult wheel_first = in_root(root, served, own);
  ASSERT_EQ(wheel_first.status, 0) << wheel_first.err;
  EXPECT_EQ(wheel_first.out, "1 1");
}

}  // namespace
}  // namespace envdoctor::test
