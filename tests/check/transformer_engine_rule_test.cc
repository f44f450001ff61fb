// TransformerEngine 2.4 to 2.10's loads read from the text of transformer_engine/common/__init__.py
// (checks/transformer_engine_rule.h): each release's shape gives the steps that release takes, and
// a file that differs in any statement the rule reads gives no rule, since no verdict on it would
// be exact. The shapes are written by support/transformer_engine_source.h; the import that these
// rules predict is refereed in a chroot by tests/image (TransformerEngineLoads).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checks/transformer_engine_rule.h"
#include "imports/python_source.h"
#include "support/fixture.h"
#include "support/transformer_engine_source.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using checks::read_te_rule;
using checks::TeRule;
using Kind = TeRule::Step::Kind;

const TePerLibraryShape k24{true, false, true, false, false, false};
const TePerLibraryShape k28{};
const TePerLibraryShape k210{false, true, false, true, true, true};

std::optional<TeRule> rule_of(const std::string& text) {
  return read_te_rule("/site/transformer_engine/common/__init__.py", text);
}

const TeRule::Loader* loader(const TeRule& r, const std::string& lib) {
  for (const TeRule::Loader& l : r.loaders)
    if (l.lib == lib) return &l;
  return nullptr;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(TransformerEngineRule, Release28TakesEachLibrarysOwnSteps) {
  std::optional<TeRule> r = rule_of(te_per_library_init(k28));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->shape, TeRule::Shape::kPerLibrary);
  EXPECT_EQ(r->wheel_glob, "nvidia/{lib}/lib/lib*.so.*[0-9]");
  std::vector<std::string> libs;
  for (const TeRule::Loader& l : r->loaders) libs.push_back(l.lib);
  EXPECT_EQ(libs, (std::vector<std::string>{"cudnn", "nvrtc", "curand", "cublas", "cuda_runtime"}));

  const TeRule::Loader* cudnn = loader(*r, "cudnn");
  ASSERT_TRUE(cudnn);
  ASSERT_EQ(cudnn->steps.size(), 5u);
  const TeRule::Step& own = cudnn->steps[0];
  EXPECT_EQ(own.kind, Kind::kHomeGlob);
  EXPECT_EQ(own.variables, (std::vector<std::string>{"CUDNN_HOME", "CUDNN_PATH"}));
  EXPECT_FALSE(own.fallback);
  EXPECT_TRUE(own.guarded);
  EXPECT_EQ(own.pattern, "libcudnn.so*");
  EXPECT_TRUE(own.drop.empty());
  const TeRule::Step& toolkit = cudnn->steps[1];
  EXPECT_EQ(toolkit.variables, (std::vector<std::string>{"CUDA_HOME", "CUDA_PATH"}));
  EXPECT_EQ(toolkit.fallback, "/usr/local/cuda");
  EXPECT_FALSE(toolkit.guarded);
  EXPECT_EQ(cudnn->steps[2].kind, Kind::kWheel);
  EXPECT_EQ(cudnn->steps[2].folder, "cudnn");
  const TeRule::Step& ldconfig = cudnn->steps[3];
  EXPECT_EQ(ldconfig.kind, Kind::kLdconfig);
  EXPECT_EQ(ldconfig.grep, "libcudnn.so");
  EXPECT_EQ(ldconfig.command, "ldconfig -p | grep 'libcudnn.so'");
  EXPECT_EQ(ldconfig.want, (std::vector<std::string>{"libcudnn", "=>"}));
  EXPECT_EQ(cudnn->steps[4].kind, Kind::kDlopen);
  EXPECT_EQ(cudnn->steps[4].pattern, "libcudnn.so");

  const TeRule::Loader* nvrtc = loader(*r, "nvrtc");
  ASSERT_TRUE(nvrtc);
  ASSERT_EQ(nvrtc->steps.size(), 4u);
  EXPECT_EQ(nvrtc->steps[0].drop, (std::vector<std::string>{"stub", "libnvrtc-builtins"}));
  EXPECT_EQ(nvrtc->steps[1].folder, "cuda_nvrtc");
  EXPECT_TRUE(nvrtc->steps[2].drop.empty());
  const TeRule::Loader* cudart = loader(*r, "cuda_runtime");
  ASSERT_TRUE(cudart);
  ASSERT_EQ(cudart->steps.size(), 1u);
  EXPECT_EQ(cudart->steps[0].kind, Kind::kWheel);
}

TEST(TransformerEngineRule, Release24PutsTheDotItselfAndGrepsEveryNvrtc) {
  std::optional<TeRule> r = rule_of(te_per_library_init(k24));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->wheel_glob, "nvidia/{lib}/lib/lib*.so.*[0-9]");
  EXPECT_FALSE(loader(*r, "curand"));
  const TeRule::Loader* cudnn = loader(*r, "cudnn");
  ASSERT_TRUE(cudnn);
  ASSERT_EQ(cudnn->steps.size(), 4u);  // no ldconfig step
  EXPECT_EQ(cudnn->steps[0].pattern, "libcudnn.so*");
  EXPECT_EQ(cudnn->steps[3].pattern, "libcudnn.so");
  const TeRule::Loader* nvrtc = loader(*r, "nvrtc");
  ASSERT_TRUE(nvrtc);
  const TeRule::Step& ldconfig = nvrtc->steps[2];
  EXPECT_EQ(ldconfig.grep, "libnvrtc");
  EXPECT_EQ(ldconfig.command, "ldconfig -p | grep 'libnvrtc'");
  EXPECT_EQ(ldconfig.drop, (std::vector<std::string>{"stub", "libnvrtc-builtins"}));
}

TEST(TransformerEngineRule, Release210ReadsEveryLineOfLdconfig) {
  std::optional<TeRule> r = rule_of(te_per_library_init(k210));
  ASSERT_TRUE(r);
  for (const std::string lib : {"cudnn", "nvrtc", "curand"}) {
    const TeRule::Loader* l = loader(*r, lib);
    ASSERT_TRUE(l) << lib;
    const TeRule::Step& ldconfig = l->steps[l->steps.size() - 2];
    EXPECT_EQ(ldconfig.kind, Kind::kLdconfig);
    EXPECT_FALSE(ldconfig.grep);
    EXPECT_EQ(ldconfig.command, "['ldconfig', '-p']");
    EXPECT_EQ(ldconfig.want, (std::vector<std::string>{"lib" + lib, "=>"}));
  }
}

TEST(TransformerEngineRule, CommentsAndLineBreaksDoNotChangeTheRule) {
  std::string text = te_per_library_init(k28);
  std::optional<TeRule> r = rule_of(text);
  ASSERT_TRUE(r);
  std::string commented = replaced(text, "    sos = []\n", "    # collected below\n\n    sos = []  # paths\n");
  commented = replaced(
      commented,
      "    libs = subprocess.check_output(\n        f\"ldconfig -p | grep 'libcudnn{_get_sys_extension()}'\", shell=True\n    )\n",
      "    libs = subprocess.check_output(f\"ldconfig -p | grep 'libcudnn{_get_sys_extension()}'\", shell=True)\n");
  std::optional<TeRule> same = rule_of(commented);
  ASSERT_TRUE(same);
  ASSERT_EQ(same->loaders.size(), r->loaders.size());
  EXPECT_EQ(loader(*same, "cudnn")->steps[3].command, loader(*r, "cudnn")->steps[3].command);
}

TEST(TransformerEngineRule, AnyOtherStatementGivesNoRule) {
  std::string text = te_per_library_init(k28);
  ASSERT_TRUE(rule_of(text));
  const std::vector<std::pair<std::string, std::string>> changes = {
      // A statement the rule does not know, in a library's function or in the module's loads.
      {"    found, handle = _load_nvidia_cuda_library(\"cudnn\")\n",
       "    print(libs)\n    found, handle = _load_nvidia_cuda_library(\"cudnn\")\n"},
      {"    _NVRTC = _load_nvrtc()\n", "    _NVRTC = _load_nvrtc()\n    _X = _other()\n"},
      // Another order, another filter, another grep, another extension.
      {"        libs.sort(reverse=True, key=os.path.basename)\n", "        libs.sort(key=os.path.basename)\n"},
      {"\"stub\" in x or \"libnvrtc-builtins\" in x", "\"stub\" in x and \"libnvrtc-builtins\" in x"},
      {"grep 'libcurand{_get_sys_extension()}'", "grep -i 'libcurand{_get_sys_extension()}'"},
      {"        return \".so\"\n", "        return \".dylib\"\n"},
      // No last dlopen: the function would return None.
      {"    return ctypes.CDLL(f\"libcurand{_get_sys_extension()}\", mode=ctypes.RTLD_GLOBAL)\n", ""},
      // An indentation that opens no block.
      {"    sos = []\n", "    sos = []\n        sos = []\n"},
      // A bracket left open.
      {"    _TE = _load_core_library()\n", "    _TE = _load_core_library(\n"},
  };
  for (const auto& [from, to] : changes) EXPECT_FALSE(rule_of(replaced(text, from, to))) << from << " -> " << to;
  // Files that read alike line by line but that Python runs otherwise (each seen to differ from
  // the real import): code after a lone carriage return, which ends a line for Python; a line that
  // only looks like a docstring; a second definition, which Python takes; the Linux branch nested
  // in another; a field of a name the function does not have (NameError); a tab in the
  // indentation (TabError); a grep quote left open, or a pattern that grep takes as an option; a
  // variable named after a name the function reads (UnboundLocalError).
  const std::vector<std::pair<std::string, std::string>> python_reads_otherwise = {
      {"    sos = []\n", "    sos = []  # note\r    raise RuntimeError(\"hidden\")\n"},
      {"    \"\"\"cudnn, found as this release finds it.\"\"\"\n",
       "    \"\"\"z\"\"\" if [].pop() else \"\"\"w\"\"\"\n"},
      {"\n\ndef sanity_checks_for_pypi_installation():",
       "\n\ndef _load_cudnn():\n    raise RuntimeError(\"second\")\n\n\ndef sanity_checks_for_pypi_installation():"},
      {"    if system == \"Linux\":\n        return \".so\"\n",
       "    if system == \"Windows\":\n        if system == \"Linux\":\n            return \".so\"\n"
       "    if system == \"Linux\":\n        return \".dylib\"\n"},
      {"    return ctypes.CDLL(f\"libcudnn{_get_sys_extension()}\", mode=ctypes.RTLD_GLOBAL)\n",
       "    return ctypes.CDLL(f\"lib{lib_name}{_get_sys_extension()}\", mode=ctypes.RTLD_GLOBAL)\n"},
      {"    _NVRTC = _load_nvrtc()\n", "\t   _NVRTC = _load_nvrtc()\n"},
      {"grep 'libcurand{_get_sys_extension()}'\"", "grep '\""},
      {"grep 'libcurand{_get_sys_extension()}'\"", "grep '-v'\""},
  };
  for (const auto& [from, to] : python_reads_otherwise)
    EXPECT_FALSE(rule_of(replaced(text, from, to))) << from << " -> " << to;
  std::string shadowed = text;
  for (size_t at; (at = shadowed.find("cudnn_home")) != std::string::npos;) shadowed.replace(at, 10, "os");
  EXPECT_FALSE(rule_of(shadowed));
  // Without the core library's load the module's loads are not known to end.
  EXPECT_FALSE(rule_of(replaced(text, "    _TE = _load_core_library()\n", "")));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    out.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

// The lines of `ldconfig -p` that the ldconfig steps read (checks/python_source.h), compared with
// what ldconfig itself prints: for this machine's cache, and in a chroot to a root whose cache
// holds an entry of a glibc-hwcaps subdirectory beside a plain one; no cache, no lines.
TEST(LdconfigPrint, IsWhatLdconfigPrints) {
  if (!have_tool("ldconfig")) GTEST_SKIP() << "needs ldconfig";
  CommandResult host = run("ldconfig -p");
  ASSERT_EQ(host.status, 0) << host.err;
  std::optional<std::vector<std::string>> model = imports::ldconfig_print(loader::LoaderConfig::for_host());
  ASSERT_TRUE(model);
  EXPECT_EQ(*model, lines_of(host.out));

  if (::geteuid() != 0 || !have_tool("chroot") || !have_tool("gcc")) GTEST_SKIP() << "needs root, chroot and gcc";
  TempDir tmp;
  std::string root = tmp / "root", lib = root + "/usr/lib/x86_64-linux-gnu";
  fs::create_directories(root + "/etc");
  fs::create_directories(root + "/sbin");
  fs::copy_file("/sbin/ldconfig", root + "/sbin/ldconfig");
  build_shared(lib + "/libplain.so.1", "int plain(void) { return 1; }", "-Wl,-soname,libplain.so.1", tmp);
  build_shared(lib + "/glibc-hwcaps/x86-64-v2/libplain.so.1", "int plain(void) { return 2; }",
               "-Wl,-soname,libplain.so.1", tmp);
  std::ofstream(root + "/etc/ld.so.conf") << "/usr/lib/x86_64-linux-gnu\n";
  EXPECT_FALSE(imports::ldconfig_print(loader::LoaderConfig::for_host(root)));
  CommandResult none = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.out, "");
  // An empty cache file: no entries, and no error.
  std::ofstream(root + "/etc/ld.so.cache").close();
  CommandResult empty = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_EQ(empty.out, "");
  std::optional<std::vector<std::string>> no_lines = imports::ldconfig_print(loader::LoaderConfig::for_host(root));
  ASSERT_TRUE(no_lines);
  EXPECT_TRUE(no_lines->empty());
  ASSERT_EQ(run("ldconfig -r " + quote(root)).status, 0);
  CommandResult chrooted = run("chroot " + quote(root) + " /sbin/ldconfig -p");
  ASSERT_EQ(chrooted.status, 0) << chrooted.err;
  EXPECT_NE(chrooted.out.find("hwcap: \"x86-64-v2\""), std::string::npos) << chrooted.out;
  model = imports::ldconfig_print(loader::LoaderConfig::for_host(root));
  ASSERT_TRUE(model);
  EXPECT_EQ(*model, lines_of(chrooted.out));
}

}  // namespace
}  // namespace envdoctor::test
