// Editable installs of a C extension (issue 50, item 4), made for real: `pip install -e .` with
// setuptools 81 (the corpus's wheel, in pip's isolated build) in each of its shapes (a finder for a
// flat layout, a path .pth for a src layout and for compat mode) and `setup.py develop` with
// setuptools 65.5 (ensurepip's, which still writes .egg-link and easy-install.pth). The project's
// extensions foo._ext and the top-level _fast link libmylib.so, a library of the project built with
// gcc in its lib/. The referee is the real import of each: while the library is there check finds
// nothing, and owns the modules as foo's; once it is removed, check's error on each module is foo's,
// in the import's words.
#include <gtest/gtest.h>

#include <map>

#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

// The setuptools wheel that python3's own ensurepip bundles, when it is older than 80 (the last
// releases whose `setup.py develop` writes an .egg-link; Python 3.12 bundles none); "" otherwise.
// Another interpreter's wheel may not fit this one (Debian's expects Debian's distutils).
std::string develop_setuptools_wheel() {
  CommandResult r =
      run("python3 -c 'import ensurepip, glob, os; "
          "print(\"\\n\".join(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), \"_bundled\", "
          "\"setuptools-*.whl\"))))'");
  std::string wheel = r.out.substr(0, r.out.find('\n'));
  std::string name = fs::path(wheel).filename().string();  // setuptools-65.5.0-py3-none-any.whl
  if (r.status != 0 || !name.starts_with("setuptools-") || std::stoi(name.substr(11)) >= 80) return "";
  return wheel;
}

class Editable : public VenvTest {
 protected:
  enum class Shape { kFinder, kCompat, kSrcLayout, kStrict, kDevelop };

  // The project: lib/libmylib.so; the package foo (under src/ for kSrcLayout) whose extension
  // _ext calls it, found through RUNPATH $ORIGIN/../lib when `rpath`; and beside foo, a top-level
  // extension module _fast that calls it too (a finder maps it by its path without a suffix).
  std::string make_project(Shape shape, bool rpath) {
    std::string proj = tmp_ / "proj";
    build_shared(proj + "/lib/libmylib.so", "int mylib_fn(void) { return 42; }", "-Wl,-soname,libmylib.so", tmp_);
    std::string src = shape == Shape::kSrcLayout ? "src/" : "";
    tmp_.write("proj/" + src + "foo/__init__.py", "from . import _ext\n");
    tmp_.write("proj/" + src + "foo/_ext.c", extension_source("_ext", "int mylib_fn(void);", "mylib_fn()"));
    tmp_.write("proj/" + src + "_fast.c", extension_source("_fast", "int mylib_fn(void);", "mylib_fn()"));
    auto extension = [&](const std::string& name, const std::string& source, const std::string& runpath) {
      return "Extension('" + name + "', ['" + src + source + "'], libraries=['mylib'], library_dirs=['lib']" +
             (rpath ? ", runtime_library_dirs=['" + runpath + "']" : "") + ")";
    };
    std::string up = shape == Shape::kSrcLayout ? "/.." : "";
    tmp_.write("proj/setup.py",
               "from setuptools import setup, Extension\n"
               "setup(name='foo', version='0.1', packages=['foo'],\n" +
                   std::string(src.empty() ? "" : "      package_dir={'': 'src'},\n") + "      ext_modules=[" +
                   extension("foo._ext", "foo/_ext.c", "$ORIGIN/.." + up + "/lib") + ", " +
                   extension("_fast", "_fast.c", "$ORIGIN" + up + "/lib") + "])\n");
    if (shape != Shape::kDevelop)
      tmp_.write("proj/pyproject.toml",
                 "[build-system]\nrequires = ['setuptools>=64']\nbuild-backend = 'setuptools.build_meta'\n");
    modules_ = {{"foo", proj + "/" + src + "foo/_ext" + suffix_}, {"_fast", proj + "/" + src + "_fast" + suffix_}};
    return proj;
  }

  // Installs the project editable in a new venv, as `shape` says; false (with the test skipped)
  // when the installer's setuptools is not on this machine.
  bool install(Shape shape, bool rpath = true) {
    std::string why;
    std::string setuptools = shape == Shape::kDevelop ? develop_setuptools_wheel() : corpus_wheel("setuptools", &why);
    if (setuptools.empty()) return false;
    std::string proj = make_project(shape, rpath);
    venv_ = venv_with_pip();
    std::string pip = quote(venv_->python()) + " -m pip install --no-index --disable-pip-version-check -q ";
    CommandResult r;
    if (shape == Shape::kDevelop) {
      r = run(pip + quote(setuptools));
      EXPECT_EQ(r.status, 0) << r.err;
      r = run("cd " + quote(proj) + " && " + quote(venv_->python()) + " setup.py -q develop");
    } else {
      // pip's isolated build installs setuptools from the wheel's directory.
      r = run(pip + "--find-links " + quote(fs::path(setuptools).parent_path().string()) + " -e " + quote(proj) +
              (shape == Shape::kCompat   ? " --config-settings editable_mode=compat"
               : shape == Shape::kStrict ? " --config-settings editable_mode=strict"
                                         : ""));
    }
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    return r.status == 0;
  }

  // The shape really made: what each installer leaves in site-packages.
  void expect_shape(Shape shape) {
    std::string site = venv_->site(), proj = tmp_ / "proj";
    std::string pth = slurp(site + "/__editable__.foo-0.1.pth");
    switch (shape) {
      case Shape::kFinder:
        EXPECT_EQ(pth, "import __editable___foo_0_1_finder; __editable___foo_0_1_finder.install()");
        break;
      case Shape::kCompat: EXPECT_EQ(pth, proj + "\n"); break;
      case Shape::kSrcLayout: EXPECT_EQ(pth, proj + "/src\n"); break;
      case Shape::kStrict:  // the link tree, named for the wheel's tag (cp311-cp311-linux_x86_64)
        EXPECT_TRUE(pth.starts_with(proj + "/build/__editable__.foo-0.1-") && pth.ends_with("\n")) << pth;
        break;
      case Shape::kDevelop:
        EXPECT_EQ(slurp(site + "/foo.egg-link"), proj + "\n.");
        EXPECT_EQ(slurp(site + "/easy-install.pth"), proj + "\n");
        // setuptools built the module in build/lib.* and copied it into the package.
        EXPECT_EQ(run("ls " + quote(proj) + "/build/lib.*/foo/_ext*.so").status, 0);
        break;
    }
  }

  std::string why_files(const std::string& variables = "") {
    CommandResult r = run((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                          " why --json --python " + quote(venv_->python()) + " foo");
    nlohmann::json answer = nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
    std::string files;
    for (const auto& f : answer["package"]["files"]) files += std::string(f["path"]) + "\n";
    return files;
  }

  // check --prefix, which runs nothing of the environment (not the finder's install()), finds
  // what check --python finds.
  void expect_no_exec_agrees(const nlohmann::json& report, const std::string& variables) {
    CommandResult r = run((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                          " check --json --prefix " + quote(venv_->dir()));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    nlohmann::json no_exec = nlohmann::json::parse(r.out);
    EXPECT_EQ(no_exec["findings"], report["findings"]);
    EXPECT_EQ(no_exec["environment"]["elf_files"], report["environment"]["elf_files"]);
  }

  // The venv and the project copied to their own paths below a root: check --root finds the same
  // errors (code, file, package and the loader's words) reading every file below it.
  void expect_root_agrees(const nlohmann::json& report) {
    TempDir root;
    std::string inside = root / tmp_.path().relative_path().string();
    fs::create_directories(inside);
    ASSERT_EQ(run("cp -a " + quote(tmp_.path().string()) + "/. " + quote(inside)).status, 0);
    CommandResult r = run(quote(envdoctor()) + " check --json --root " + quote(root.path().string()) + " --prefix " +
                          quote(venv_->dir()));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    auto errors = [](const nlohmann::json& doc) {
      std::multiset<std::string> out;
      for (const auto& f : doc["findings"])
        out.insert(f["code"].dump() + " " + f["file"].dump() + " " + f["package"].dump() + " " + f["message"].dump());
      return out;
    };
    EXPECT_EQ(errors(nlohmann::json::parse(r.out)), errors(report)) << r.out;
  }

  // Before: the imports work and check finds nothing, the modules foo's. After the library is
  // removed: each import fails, and check's one error on each module is foo's, in its words.
  void expect_referee_agrees(const std::string& variables = "") {
    int status = -1;
    nlohmann::json report = venv_->check(&status, "", variables);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(report["findings"], nlohmann::json::array()) << report.dump(1);
    expect_no_exec_agrees(report, variables);
    if (variables.empty()) expect_root_agrees(report);
    for (const auto& [name, file] : modules_) {
      ASSERT_EQ(venv_->import(name, variables), "");
      EXPECT_NE(why_files(variables).find(file + "\n"), std::string::npos) << why_files(variables);
    }

    fs::remove(tmp_ / "proj/lib/libmylib.so");
    report = venv_->check(&status, "", variables);
    EXPECT_EQ(status, 1);
    std::map<std::string, nlohmann::json> errors;
    for (const auto& f : report["findings"])
      if (f["severity"] == "error") errors.emplace(f["file"], f);
    ASSERT_EQ(errors.size(), modules_.size()) << report.dump(1);
    for (const auto& [name, file] : modules_) {
      std::string referee = venv_->import(name, variables);
      ASSERT_EQ(referee, "libmylib.so: cannot open shared object file: No such file or directory");
      const nlohmann::json& error = errors[file];
      EXPECT_EQ(error["code"], "missing-library") << file;
      EXPECT_EQ(error["package"], "foo") << file;
      EXPECT_EQ(error["message"], referee) << file;
    }
    expect_no_exec_agrees(report, variables);
    if (variables.empty()) expect_root_agrees(report);
  }

  std::unique_ptr<Venv> venv_;
  std::vector<std::pair<std::string, std::string>> modules_;  // import name, the file it loads
};

// setuptools' default for a flat layout: a finder maps foo to the project's foo/, which is not on
// sys.path. Before, check walked nothing of the project: `why foo` had no ELF files, and the
// removed library was an "All clear".
TEST_F(Editable, PipInstallEditableFinder) {
  if (!install(Shape::kFinder)) GTEST_SKIP() << "needs setuptools 81 from the corpus (scripts/install-test-tools.sh)";
  expect_shape(Shape::kFinder);
  expect_referee_agrees();
  // The finder's install() line is not run, and is listed as such in the JSON; the text's note on
  // code not run leaves it out, since its mapping is read.
  int status = -1;
  nlohmann::json report = venv_->check(&status);
  bool listed = false;
  for (const auto& code : report["environment"]["site_code_not_run"])
    listed = listed || std::string(code["file"]).find("__editable__.foo") != std::string::npos;
  EXPECT_TRUE(listed) << report["environment"].dump(1);
  CommandResult text = run(quote(envdoctor()) + " check --python " + quote(venv_->python()));
  EXPECT_EQ(text.out.find("__editable__"), std::string::npos) << text.out;
}

// compat mode: a path line puts the project's directory on sys.path.
TEST_F(Editable, PipInstallEditableCompatPath) {
  if (!install(Shape::kCompat)) GTEST_SKIP() << "needs setuptools 81 from the corpus (scripts/install-test-tools.sh)";
  expect_shape(Shape::kCompat);
  expect_referee_agrees();
}

// A src layout: the path line names src/, and the module finds its library by RUNPATH two up.
TEST_F(Editable, PipInstallEditableSrcLayout) {
  if (!install(Shape::kSrcLayout))
    GTEST_SKIP() << "needs setuptools 81 from the corpus (scripts/install-test-tools.sh)";
  expect_shape(Shape::kSrcLayout);
  expect_referee_agrees();
}

// setup.py develop: build/lib.*'s copy of the module, whose RUNPATH $ORIGIN/../lib finds no
// library from there, was checked as a module no package owns and gave a false error.
TEST_F(Editable, SetupPyDevelopEggLink) {
  if (!install(Shape::kDevelop)) GTEST_SKIP() << "needs a setuptools wheel older than 80 (ensurepip's)";
  expect_shape(Shape::kDevelop);
  std::string files = why_files();
  EXPECT_EQ(files.find("/build/"), std::string::npos) << files;
  expect_referee_agrees();
}

// No RUNPATH: the library is found through LD_LIBRARY_PATH, by the import and by check alike.
TEST_F(Editable, SetupPyDevelopWithoutRunpath) {
  if (!install(Shape::kDevelop, false)) GTEST_SKIP() << "needs a setuptools wheel older than 80 (ensurepip's)";
  EXPECT_NE(venv_->import("foo"), "");
  EXPECT_NE(venv_->import("_fast"), "");
  expect_referee_agrees("LD_LIBRARY_PATH=" + tmp_ / "proj/lib");
}

// What if the editable install is uninstalled: pip removes the .pth (or the .egg-link and its
// easy-install.pth line), the project stays on disk and nothing imports it any more. check
// --without foo says so before, and check after the real `pip uninstall` agrees.
TEST_F(Editable, UninstallTakesTheProjectOffTheImportPath) {
  for (Shape shape : {Shape::kFinder, Shape::kDevelop}) {
    SCOPED_TRACE(shape == Shape::kFinder ? "finder" : "setup.py develop");
    fs::remove_all(tmp_ / "proj");
    if (!install(shape)) GTEST_SKIP() << "needs setuptools 81 from the corpus and ensurepip's setuptools 65.5";
    fs::remove(tmp_ / "proj/lib/libmylib.so");
    int status = -1;
    nlohmann::json what_if = venv_->check(&status, "--without foo");
    EXPECT_EQ(status, 0);
    EXPECT_EQ(what_if["findings"], nlohmann::json::array()) << what_if.dump(1);
    venv_->uninstall("foo");
    EXPECT_EQ(venv_->import("foo"), "ModuleNotFoundError: No module named 'foo'");
    nlohmann::json after = venv_->check(&status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(after["findings"], nlohmann::json::array()) << after.dump(1);
    EXPECT_EQ(after["environment"]["elf_files"], what_if["environment"]["elf_files"]);
  }
}

// strict mode: a tree of links to the project's files, on sys.path. Import opens the links, so
// $ORIGIN is the tree's directory, and a RUNPATH relative to the project's layout finds nothing
// from there: the import fails with the library in place, and so does check, on the links. (The
// walk once took no link for a file: an "All clear", and `why foo` listed no ELF file.)
TEST_F(Editable, PipInstallEditableStrictLinkTree) {
  if (!install(Shape::kStrict)) GTEST_SKIP() << "needs setuptools 81 from the corpus (scripts/install-test-tools.sh)";
  expect_shape(Shape::kStrict);
  std::string tree = slurp(venv_->site() + "/__editable__.foo-0.1.pth");
  ASSERT_FALSE(tree.empty());
  tree.pop_back();
  ASSERT_TRUE(fs::is_symlink(tree + "/foo/_ext" + suffix_));
  int status = -1;
  nlohmann::json report = venv_->check(&status);
  EXPECT_EQ(status, 1);
  std::map<std::string, nlohmann::json> errors;
  for (const auto& f : report["findings"])
    if (f["severity"] == "error") errors.emplace(f["file"], f);
  ASSERT_EQ(errors.size(), 2u) << report.dump(1);
  for (const auto& [name, file] : {std::pair<std::string, std::string>{"foo", tree + "/foo/_ext" + suffix_},
                                   {"_fast", tree + "/_fast" + suffix_}}) {
    std::string referee = venv_->import(name);
    ASSERT_EQ(referee, "libmylib.so: cannot open shared object file: No such file or directory");
    EXPECT_EQ(errors[file]["package"], "foo") << file;
    EXPECT_EQ(errors[file]["message"], referee) << file;
  }
  expect_no_exec_agrees(report, "");
  expect_root_agrees(report);
}

// A package inside a namespace package (PEP 420, no ns/__init__.py): setuptools' finder maps the
// dotted name ns.sub to its directory and lists ns in NAMESPACES.
TEST_F(Editable, PipInstallEditableNamespacePackage) {
  std::string why, setuptools = corpus_wheel("setuptools", &why);
  if (setuptools.empty()) GTEST_SKIP() << why;
  std::string proj = tmp_ / "proj";
  build_shared(proj + "/lib/libmylib.so", "int mylib_fn(void) { return 42; }", "-Wl,-soname,libmylib.so", tmp_);
  tmp_.write("proj/ns/sub/__init__.py", "from . import _ext\n");
  tmp_.write("proj/ns/sub/_ext.c", extension_source("_ext", "int mylib_fn(void);", "mylib_fn()"));
  tmp_.write(
      "proj/setup.py",
      "from setuptools import setup, Extension\n"
      "setup(name='nsproj', version='0.1', packages=['ns.sub'],\n"
      "      ext_modules=[Extension('ns.sub._ext', ['ns/sub/_ext.c'], libraries=['mylib'], library_dirs=['lib'],\n"
      "                             runtime_library_dirs=['$ORIGIN/../../lib'])])\n");
  tmp_.write("proj/pyproject.toml",
             "[build-system]\nrequires = ['setuptools>=64']\nbuild-backend = 'setuptools.build_meta'\n");
  venv_ = venv_with_pip();
  CommandResult r =
      run(quote(venv_->python()) + " -m pip install --no-index --disable-pip-version-check -q --find-links " +
          quote(fs::path(setuptools).parent_path().string()) + " -e " + quote(proj));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string finder = slurp(venv_->site() + "/__editable___nsproj_0_1_finder.py");
  EXPECT_NE(finder.find("MAPPING: dict[str, str] = {'ns.sub': '" + proj + "/ns/sub'}"), std::string::npos) << finder;
  EXPECT_NE(finder.find("NAMESPACES: dict[str, list[str]] = {'ns': []}"), std::string::npos) << finder;
  std::string module = proj + "/ns/sub/_ext" + suffix_;
  ASSERT_EQ(venv_->import("ns.sub"), "");
  int status = -1;
  nlohmann::json report = venv_->check(&status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(report["findings"], nlohmann::json::array()) << report.dump(1);
  fs::remove(proj + "/lib/libmylib.so");
  std::string referee = venv_->import("ns.sub");
  ASSERT_EQ(referee, "libmylib.so: cannot open shared object file: No such file or directory");
  report = venv_->check(&status);
  EXPECT_EQ(status, 1);
  ASSERT_EQ(report["findings"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["findings"][0]["file"], module);
  EXPECT_EQ(report["findings"][0]["package"], "nsproj");
  EXPECT_EQ(report["findings"][0]["message"], referee);
}

}  // namespace
}  // namespace envdoctor::test
