// sys.path as site.py makes it, held to the real interpreter's own sys.path entry by entry:
// without running it (--prefix: Debian's dist-packages, the version from the binary, every
// pyenv CPython), and when it is run, without any of the environment's code (.pth import lines,
// sitecustomize) ever running.
#include "python/site_layout.h"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures/python_fixture.h"
#include "python/interpreter.h"

namespace envdoctor::python {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

// The referee: `python -c` with site.py run as it runs for every user, sys.path as it reports it.
struct RealPython {
  std::vector<std::string> sys_path;
  std::string version;
};

RealPython real_python(const std::string& python) {
  // sys alone: a module of the environment's (a json.py on PYTHONPATH) is not imported here either.
  test::CommandResult r = test::run(test::quote(python) +
                                    " -c 'import sys; v = sys.version_info; sys.stdout.write(\"%d.%d.%d\\n\" % "
                                    "v[:3] + \"\\n\".join(sys.path))'");
  EXPECT_EQ(r.status, 0) << r.err;
  RealPython real;
  std::istringstream lines(r.out);
  std::getline(lines, real.version);
  for (std::string line; std::getline(lines, line);) real.sys_path.push_back(line);
  if (!r.out.empty() && r.out.back() == '\n') real.sys_path.push_back("");  // a last entry ""
  return real;
}

// Debian's python3 (its site.py patched for dist-packages) read without running it: the real
// interpreter's sys.path, entry by entry, and its real version (3.11.2, not "3.11.0").
TEST(SiteLayout, DebiansSystemPythonWithoutRunningIt) {
  if (!fs::exists("/usr/lib/python3/dist-packages") || !fs::exists("/usr/bin/python3"))
    GTEST_SKIP() << "no Debian system Python here";
  RealPython real = real_python("/usr/bin/python3");
  ASSERT_FALSE(real.sys_path.empty());
  std::string error;
  auto read = environment_from_prefix("/usr", &error);
  ASSERT_TRUE(read) << error;
  std::vector<std::string> expected(real.sys_path.begin() + 1, real.sys_path.end());  // "" is -c's
  EXPECT_EQ(read->sys_path, expected);
  EXPECT_EQ(read->version_info.full_str(), real.version);
  test::CommandResult purelib =
      test::run("/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'");
  EXPECT_EQ(read->paths.purelib + "\n", purelib.out);
  // The interpreter run (with -S, and site.main() without the environment's code) agrees.
  auto ran = discover_interpreter({"/usr/bin/python3"}, &error);
  ASSERT_TRUE(ran) << error;
  EXPECT_EQ(ran->sys_path, real.sys_path);
  EXPECT_EQ(read->site_dirs(), ran->site_dirs());
  // And check finds the same environment both ways (54 packages and 213 ELF files here).
  auto environment = [](const std::string& args) {
    test::CommandResult r = test::run(test::quote(test::envdoctor()) + " check --json " + args);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    return doc.is_object() ? doc["environment"] : nlohmann::json();
  };
  nlohmann::json by_prefix = environment("--prefix /usr"), by_python = environment("--python /usr/bin/python3");
  for (const char* key : {"python", "version", "site_packages", "packages", "elf_files", "installer"})
    EXPECT_EQ(by_prefix[key], by_python[key]) << key;
  EXPECT_GT(by_prefix["packages"].get<size_t>(), 0u);
}

// Every CPython of pyenv on this machine (3.6 to 3.13), read without running it (sys.path, and the
// version from the interpreter's own binary) and run by the probe, as the interpreter itself
// reports them.
TEST(SiteLayout, EveryPyenvPythonWithoutRunningIt) {
  size_t checked = 0;
  for (const char* v : {"3.6.15", "3.7.16", "3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"}) {
    std::string python = test::pyenv_python(v);
    if (python.empty()) continue;
    SCOPED_TRACE(python);
    RealPython real = real_python(python);
    std::string error;
    auto read = environment_from_prefix("/root/.pyenv/versions/" + std::string(v), &error);
    ASSERT_TRUE(read) << error;
    EXPECT_EQ(read->version_info.full_str(), real.version);
    EXPECT_EQ(read->sys_path, std::vector<std::string>(real.sys_path.begin() + 1, real.sys_path.end()));
    // Run with -S and site.main() called by the probe, each version's site.py gives the same.
    auto ran = discover_interpreter({python}, &error);
    ASSERT_TRUE(ran) << error;
    EXPECT_EQ(ran->sys_path, real.sys_path);
    EXPECT_EQ(ran->version_info.full_str(), real.version);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no pyenv interpreters here";
}

// The environment's code planted where site.py runs it: a .pth import line and a sitecustomize
// module, each writing a file. envdoctor's probe and its no-exec read leave no trace, report both
// as not run, and still find the sys.path that the real interpreter (which runs them) has: a
// relative line, an absolute one, a missing one, a duplicate, comments and blank lines, CRLF, the
// .pth files in name order.
TEST(SiteLayout, APlantedPthLineAndSitecustomizeNeverRun) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  TempDir tmp;
  test::CommandResult made = test::run("python3 -m venv --without-pip " + test::quote(tmp / "v"));
  ASSERT_EQ(made.status, 0) << made.err;
  fs::path site = fs::directory_iterator(tmp.path() / "v/lib")->path() / "site-packages";
  std::string trace = tmp / "trace";
  for (const char* dir : {"src/a", "src/b", "src/c"}) fs::create_directories(tmp.path() / dir);
  std::ofstream(site / "b.pth") << "# comment\n\n../../../../src/b\r\nimport os; open(" << nlohmann::json(trace).dump()
                                << ", 'a').write('pth\\n')\n../../../../absent\n"
                                << (tmp / "src/a") << "\n";
  std::ofstream(site / "a.pth") << "../../../../src/a\n  ../../../../src/c\n";
  std::ofstream(site / "sitecustomize.py") << "open(" << nlohmann::json(trace).dump() << ", 'a').write('site\\n')\n";

  std::string error;
  auto ran = discover_interpreter({tmp / "v/bin/python"}, &error);
  ASSERT_TRUE(ran) << error;
  auto read = environment_from_prefix(tmp / "v", &error);
  ASSERT_TRUE(read) << error;
  EXPECT_FALSE(fs::exists(trace)) << test::slurp(trace);

  std::vector<SiteCode> expected = {
      {site.string() + "/b.pth", 4, "import os; open(" + nlohmann::json(trace).dump() + ", 'a').write('pth\\n')"},
      {site.string() + "/sitecustomize.py", 0, "sitecustomize"}};
  for (const PythonEnvironment* env : {&*ran, &*read}) {
    std::string listed;
    for (const SiteCode& c : env->site_code_not_run)
      listed += c.file + ":" + std::to_string(c.line) + " " + c.text + "\n";
    ASSERT_EQ(env->site_code_not_run.size(), expected.size()) << listed;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(env->site_code_not_run[i].file, expected[i].file);
      EXPECT_EQ(env->site_code_not_run[i].line, expected[i].line);
      EXPECT_EQ(env->site_code_not_run[i].text, expected[i].text);
    }
  }
  // The referee runs them (the plant works: the .pth line twice, as site.py reads a venv's
  // site-packages twice), and its sys.path is envdoctor's.
  RealPython real = real_python(tmp / "v/bin/python");
  EXPECT_EQ(test::slurp(trace), "pth\npth\nsite\n");
  EXPECT_EQ(ran->sys_path, real.sys_path);
  EXPECT_EQ(read->sys_path, std::vector<std::string>(real.sys_path.begin() + 1, real.sys_path.end()));
  EXPECT_EQ(read->sys_path.back(), tmp / "src/b");  // a.pth's a, its " c" (no such dir), then b.pth's b

  // check's note names both; with Debian's own sitecustomize (the apport hook, which adds no path
  // and no finder) in the planted one's place, only the .pth line.
  std::string check = test::quote(test::envdoctor()) + " check --python " + test::quote(tmp / "v/bin/python");
  std::string note = test::run(check).out;
  EXPECT_NE(note.find("import line of .pth files (" + site.string() + "/b.pth:4) and sitecustomize"), std::string::npos)
      << note;
  std::ofstream(site / "sitecustomize.py", std::ios::trunc)
      << "# install the apport exception handler if available\ntry:\n    import apport_python_hook\nexcept "
         "ImportError:\n    pass\nelse:\n    apport_python_hook.install()\n";
  note = test::run(check).out;
  EXPECT_NE(note.find("import line of .pth files (" + site.string() + "/b.pth:4);"), std::string::npos) << note;
  EXPECT_EQ(note.find("sitecustomize"), std::string::npos) << note;
  // virtualenv's own .pth (tox, hatch, poetry, pipx, nox make their venvs with it) is not named.
  std::ofstream(site / "_virtualenv.pth") << "import _virtualenv\n";
  note = test::run(check).out;
  EXPECT_NE(note.find("import line of .pth files (" + site.string() + "/b.pth:4);"), std::string::npos) << note;
  EXPECT_EQ(note.find("_virtualenv"), std::string::npos) << note;
}

// PYTHONPATH still counts (the user's imports see it), but the probe's own imports never come from
// it: a json.py there would be the environment's code.
TEST(SiteLayout, ThePythonpathCountsButItsModulesAreNotImported) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  TempDir tmp;
  std::string trace = tmp / "trace";
  tmp.write("pp/json.py", "open(" + nlohmann::json(trace).dump() + ", 'a').write('json\\n')\nfrom _json import *\n");
  const char* saved = std::getenv("PYTHONPATH");
  std::optional<std::string> restore = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("PYTHONPATH", (tmp / "pp").c_str(), 1);
  std::string error;
  auto ran = discover_interpreter({"python3"}, &error);
  RealPython real = real_python("python3");
  if (restore) ::setenv("PYTHONPATH", restore->c_str(), 1);
  else ::unsetenv("PYTHONPATH");
  ASSERT_TRUE(ran) << error;
  EXPECT_EQ(ran->sys_path, real.sys_path);
  EXPECT_EQ(ran->sys_path.at(1), tmp / "pp");
  EXPECT_FALSE(fs::exists(trace));
}

TEST(SiteLayout, NormpathAsPosixpath) {
  EXPECT_EQ(normpath("/a/b/../c/./d/"), "/a/c/d");
  EXPECT_EQ(normpath("/../a"), "/a");
  EXPECT_EQ(normpath("//a//b"), "//a/b");
  EXPECT_EQ(normpath("///a"), "/a");
  EXPECT_EQ(normpath("/"), "/");
  EXPECT_EQ(normpath("a/../../b"), "../b");
}

// The rules read from a distribution's own site.py: Debian's names "dist-packages", Fedora's
// inserts "/usr/local" and keeps its standard library in lib64.
TEST(SiteLayout, TheDistributionsRulesFromItsSitePy) {
  TempDir tmp;
  support::FileRoot root(tmp.path().string());
  tmp.write("deb/usr/lib/python3.11/os.py", "");
  tmp.write("deb/usr/lib/python3.11/site.py", "x = os.path.join(prefix, \"local/lib\", \"dist-packages\")\n");
  SiteRules debian = read_site_rules("/deb/usr", "3.11", root);
  EXPECT_EQ(debian.flavor, SiteFlavor::kDebian);
  EXPECT_EQ(getsitepackages(debian, "3.11", {"/usr"}, false),
            (std::vector<std::string>{"/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                                      "/usr/lib/python3.11/dist-packages"}));
  tmp.write("fed/usr/lib64/python3.12/os.py", "");
  tmp.write("fed/usr/lib64/python3.12/site.py", "PREFIXES.insert(0, \"/usr/local\")\n");
  SiteRules fedora = read_site_rules("/fed/usr", "3.12", root);
  EXPECT_EQ(fedora.flavor, SiteFlavor::kFedora);
  EXPECT_EQ(fedora.platlibdir, "lib64");
  EXPECT_EQ(
      getsitepackages(fedora, "3.12", {"/usr"}, false),
      (std::vector<std::string>{"/usr/local/lib64/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages",
                                "/usr/lib64/python3.12/site-packages", "/usr/lib/python3.12/site-packages"}));
  EXPECT_EQ(getsitepackages(fedora, "3.12", {"/v"}, true),
            (std::vector<std::string>{"/v/lib64/python3.12/site-packages", "/v/lib/python3.12/site-packages"}));

  // A Fedora-shaped root read as --root: the standard library in lib64, the site directories that
  // exist, and pip's install location under /usr/local (pip install --prefix=/usr writes
  // /usr/local/lib64/python3.X/site-packages there). No Fedora root is at hand for a chroot referee.
  support::FileRoot fed((tmp.path() / "fed").string());
  for (const char* dir : {"usr/local/lib64/python3.12/site-packages", "usr/lib64/python3.12/site-packages",
                          "usr/lib/python3.12/site-packages", "usr/lib64/python3.12/lib-dynload"})
    fs::create_directories(tmp.path() / "fed" / dir);
  std::string error;
  auto env = environment_from_prefix("/usr", &error, fed);
  ASSERT_TRUE(env) << error;
  EXPECT_EQ(env->sys_path,
            (std::vector<std::string>{"/usr/lib64/python312.zip", "/usr/lib64/python3.12",
                                      "/usr/lib64/python3.12/lib-dynload", "/usr/local/lib64/python3.12/site-packages",
                                      "/usr/lib64/python3.12/site-packages", "/usr/lib/python3.12/site-packages"}));
  EXPECT_EQ(env->paths.purelib, "/usr/local/lib/python3.12/site-packages");
  EXPECT_EQ(env->paths.platlib, "/usr/local/lib64/python3.12/site-packages");
}

}  // namespace
}  // namespace envdoctor::python
