#include "python/interpreter.h"
#include "python/site_layout.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "fixtures/python_fixture.h"

namespace envdoctor::python {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

std::string script(const TempDir& tmp, const std::string& name, const std::string& text) {
  std::string path = tmp.write(name, "#!/bin/sh\n" + text);
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(Interpreter, DiscoversThePython3OnPath) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  std::string error;
  auto env = discover_interpreter({"python3"}, &error);
  ASSERT_TRUE(env) << error;
  test::CommandResult r = test::run(
      "python3 -c 'import sys, sysconfig; print(sys.prefix); print(sysconfig.get_paths()[\"purelib\"]); "
      "print(\"%d.%d.%d\" % sys.version_info[:3]); print(sysconfig.get_config_var(\"EXT_SUFFIX\"))'");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out, env->prefix + "\n" + env->paths.purelib + "\n" + env->version_info.full_str() + "\n" +
                       env->ext_suffix + "\n");
  EXPECT_TRUE(env->executed);
  EXPECT_EQ(env->implementation, "cpython");
  EXPECT_EQ(env->markers.at("python_version"), env->version_info.short_str());
  EXPECT_EQ(env->markers.at("sys_platform"), "linux");
  EXPECT_FALSE(env->glibc_version.empty());
  EXPECT_EQ(env->real_executable, fs::canonical(env->executable).string());
  std::vector<std::string> sites = env->site_dirs();
  EXPECT_NE(std::find(sites.begin(), sites.end(), env->paths.purelib), sites.end());
}

TEST(Interpreter, MissingBrokenAndHangingInterpretersAreErrors) {
  TempDir tmp;
  std::string error;
  EXPECT_FALSE(discover_interpreter({tmp / "nope/python"}, &error));
  EXPECT_EQ(error, "cannot run " + tmp / "nope/python" + ": No such file or directory");

  std::string noexec = tmp.write("noexec", "");
  EXPECT_FALSE(discover_interpreter({noexec}, &error));
  EXPECT_EQ(error, "cannot run " + noexec + ": Permission denied");

  std::string broken = script(tmp, "broken", "echo 'Fatal Python error: init_fs_encoding' >&2\nexit 3\n");
  EXPECT_FALSE(discover_interpreter({broken}, &error));
  EXPECT_EQ(error, broken + " exited with status 3: Fatal Python error: init_fs_encoding");

  std::string chatty = script(tmp, "chatty", "echo hello\n");
  EXPECT_FALSE(discover_interpreter({chatty}, &error));
  EXPECT_EQ(error, chatty + " is not a Python interpreter (it did not answer envdoctor's probe)");

  // Issue 18: not an interpreter at all. The probe script is on stdin, never in argv, so nothing
  // echoes it back ("ls: cannot access '<the whole script>': File name too long").
  EXPECT_FALSE(discover_interpreter({"/bin/ls"}, &error));
  EXPECT_EQ(error, "/bin/ls is not a Python interpreter (it did not answer envdoctor's probe: exit status 2)");

  std::string hangs = script(tmp, "hangs", "exec sleep 30\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(discover_interpreter({hangs, std::chrono::milliseconds(300)}, &error));
  EXPECT_EQ(error, hangs + " did not finish within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));

  if (std::string python2 = "/root/.pyenv/versions/2.7.18/bin/python"; fs::exists(python2)) {
    EXPECT_FALSE(discover_interpreter({python2}, &error));
    EXPECT_EQ(error, python2 + " exited with status 3: Python 2.7 is too old: envdoctor needs 3.3 or newer");
  }

  std::string killed = script(tmp, "killed", "kill -9 $$\n");
  EXPECT_FALSE(discover_interpreter({killed}, &error));
  EXPECT_EQ(error, killed + " exited with status 137");
}

TEST(Interpreter, DefaultOrderPrefersVirtualEnvThenConda) {
  TempDir tmp;
  std::string venv_python = script(tmp, "venv/bin/python", "");
  std::string conda_python = script(tmp, "conda/bin/python", "");
  auto saved = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto venv = saved("VIRTUAL_ENV"), conda = saved("CONDA_PREFIX");
  std::string error;
  ::setenv("VIRTUAL_ENV", (tmp / "venv").c_str(), 1);
  ::setenv("CONDA_PREFIX", (tmp / "conda").c_str(), 1);
  EXPECT_EQ(default_python(&error), venv_python);
  ::setenv("VIRTUAL_ENV", (tmp / "gone").c_str(), 1);
  EXPECT_EQ(default_python(&error), conda_python);
  ::unsetenv("VIRTUAL_ENV");
  ::unsetenv("CONDA_PREFIX");
  auto found = default_python(&error);
  if (test::have_tool("python3")) {
    EXPECT_TRUE(found && found->ends_with("/python3"));
  }
  if (venv) ::setenv("VIRTUAL_ENV", venv->c_str(), 1);
  if (conda) ::setenv("CONDA_PREFIX", conda->c_str(), 1);
}

// A binary in ENV/bin of a venv or conda environment examines ENV; anywhere else (make install
// PREFIX=/usr/local, the build folder) the usual order holds. ENVDOCTOR_PYTHON, which
// `python -m envdoctor` sets, comes first.
TEST(Interpreter, TheEnvironmentABinaryIsInstalledInComesFirst) {
  TempDir tmp;
  std::string venv_python = script(tmp, "venv/bin/python", "");
  tmp.write("venv/pyvenv.cfg", "home = /usr/bin\n");
  std::string conda_python = script(tmp, "conda/bin/python", "");
  fs::create_directories(tmp / "conda/conda-meta");
  script(tmp, "plain/bin/python", "");
  EXPECT_EQ(installed_environment_python(tmp / "venv/bin/envdoctor"), venv_python);
  EXPECT_EQ(installed_environment_python(tmp / "conda/bin/envdoctor"), conda_python);
  EXPECT_EQ(installed_environment_python(tmp / "plain/bin/envdoctor"), std::nullopt);
  EXPECT_EQ(installed_environment_python(tmp / "nopython/bin/envdoctor"), std::nullopt);

  const char* saved = std::getenv("ENVDOCTOR_PYTHON");
  std::optional<std::string> restore = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("ENVDOCTOR_PYTHON", conda_python.c_str(), 1);
  std::string error;
  EXPECT_EQ(default_python(&error), conda_python);
  if (restore) ::setenv("ENVDOCTOR_PYTHON", restore->c_str(), 1);
  else ::unsetenv("ENVDOCTOR_PYTHON");
}

// --prefix reads pyvenv.cfg and the layout; what it finds must agree with what the venv's own
// interpreter says.
TEST(Interpreter, PrefixWithoutExecAgreesWithTheInterpreter) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  TempDir tmp;
  test::CommandResult r = test::run("python3 -m venv --without-pip " + test::quote(tmp / "v"));
  ASSERT_EQ(r.status, 0) << r.err;
  // An editable install's .pth: a directory line counts, an import line is code.
  fs::path lib = fs::directory_iterator(tmp.path() / "v/lib")->path();  // lib/python3.X
  fs::create_directories(tmp.path() / "src/editable");
  std::ofstream(lib / "site-packages/__editable__.demo.pth")
      << "# comment\n../../../../src/editable\nimport sys\n../../../../absent\n";
  std::string error;
  auto ran = discover_interpreter({tmp / "v/bin/python"}, &error);
  ASSERT_TRUE(ran) << error;
  auto read = environment_from_prefix(tmp / "v", &error);
  ASSERT_TRUE(read) << error;
  EXPECT_FALSE(read->executed);
  EXPECT_EQ(read->prefix, ran->prefix);
  EXPECT_EQ(read->base_prefix, ran->base_prefix);
  EXPECT_EQ(read->version_info.full_str(), ran->version_info.full_str());
  EXPECT_EQ(read->paths.purelib, ran->paths.purelib);
  EXPECT_EQ(read->paths.platlib, ran->paths.platlib);
  EXPECT_EQ(read->paths.stdlib, ran->paths.stdlib);
  EXPECT_EQ(read->paths.scripts, ran->paths.scripts);
  EXPECT_EQ(read->ext_suffix, ran->ext_suffix);
  EXPECT_EQ(read->soabi, ran->soabi);
  EXPECT_EQ(read->glibc_version, ran->glibc_version);
  EXPECT_EQ(read->site_dirs(), ran->site_dirs());
  EXPECT_EQ(read->site_dirs().back(), tmp / "src/editable");
  EXPECT_EQ(read->markers, ran->markers);
  EXPECT_EQ(read->real_executable, ran->real_executable);
  EXPECT_FALSE(read->include_system_site_packages);
}

TEST(Interpreter, PrefixErrors) {
  TempDir tmp;
  std::string error;
  EXPECT_FALSE(environment_from_prefix(tmp / "absent", &error));
  EXPECT_EQ(error, tmp / "absent" + ": not a directory");
  EXPECT_FALSE(environment_from_prefix(tmp.path().string(), &error));
  EXPECT_EQ(error, tmp.path().string() + ": no pyvenv.cfg version and no lib/python3.X directory");
  // A conda-style prefix: no pyvenv.cfg, one lib/python3.X.
  fs::create_directories(tmp.path() / "lib/python3.10/site-packages");
  auto env = environment_from_prefix(tmp.path().string(), &error);
  ASSERT_TRUE(env) << error;
  EXPECT_EQ(env->version_info.short_str(), "3.10");
  EXPECT_EQ(env->site_dirs(), (std::vector<std::string>{tmp / "lib/python3.10", tmp / "lib/python3.10/site-packages"}));
}

TEST(Interpreter, ProbeOutputParsing) {
  std::string error;
  EXPECT_FALSE(parse_probe_output("[1, 2]", &error));
  EXPECT_EQ(error, "the interpreter's answer is not JSON: [1, 2]");
  EXPECT_FALSE(parse_probe_output("{}", &error));
  EXPECT_EQ(error, "the interpreter's answer has no version_info");
  auto env = parse_probe_output(
      R"({"version_info": [3, 13, 0, "candidate", 2], "prefix": "/p", "base_prefix": "/b",
          "config": {"Py_DEBUG": null, "Py_GIL_DISABLED": 1}, "has_refcount": true, "libc": "glibc 2.17",
          "path": ["", "/p/lib", 7]})",
      &error);
  ASSERT_TRUE(env) << error;
  EXPECT_EQ(env->version_info.full_str(), "3.13.0c2");
  EXPECT_TRUE(env->in_venv());
  EXPECT_TRUE(env->py_debug);  // Py_DEBUG unknown: sys.gettotalrefcount decides
  EXPECT_TRUE(env->gil_disabled);
  EXPECT_EQ(env->glibc_version, "2.17");
  EXPECT_EQ(env->sys_path, (std::vector<std::string>{"", "/p/lib"}));

  // A program that is not the probe may print flags of another type: the defaults, never a throw.
  env = parse_probe_output(
      R"({"version_info": [3, 11, 2, "final", 0], "user_site": 1, "site_dirs": [], "has_refcount": "yes",
          "is_64bit": 0, "config": 5})",
      &error);
  ASSERT_TRUE(env) << error;
  EXPECT_FALSE(env->py_debug);
  EXPECT_FALSE(env->is_32bit);
}

// gh-113659's rule by release: hidden .pth files skipped from 3.13 and the backports' releases.
TEST(Interpreter, HiddenPthFilesSkippedFromTheReleasesOfTheFix) {
  auto skips = [](int minor, int micro) { return SiteVersion{3, minor, micro}.skips_hidden_pth(); };
  EXPECT_TRUE(skips(13, 0));
  EXPECT_TRUE(skips(12, 2));
  EXPECT_FALSE(skips(12, 1));
  EXPECT_TRUE(skips(11, 8));
  EXPECT_FALSE(skips(11, 7));
  EXPECT_TRUE(skips(10, 14));
  EXPECT_FALSE(skips(10, 13));
  EXPECT_TRUE(skips(9, 19));
  EXPECT_FALSE(skips(9, 18));
  EXPECT_FALSE(skips(8, 20));
}

}  // namespace
}  // namespace envdoctor::python
