// Real Python environments for end-to-end tests: a venv made with `python3 -m venv`, wheels
// installed and removed with the real pip, CPython extension modules built with gcc, and the
// referee every prediction is compared with: a real `python -c "import M"`.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "python/python_fixture.h"
#include "support/fixture.h"
#include "support/schema.h"

namespace envdoctor::test {

inline std::string python_include() {
  CommandResult r = run("python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"include\"])'");
  std::string s = r.out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

inline std::string ext_suffix() {
  CommandResult r = run("python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))'");
  std::string s = r.out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// A CPython extension module `module` whose PyInit calls `call` (a function of a library it
// links, or nothing).
inline std::string extension_source(const std::string& module, const std::string& decl, const std::string& call) {
  return "#include <Python.h>\n" + decl + "\nstatic PyObject* f(PyObject* s, PyObject* a) { return PyLong_FromLong(" +
         call +
         "); }\n"
         "static PyMethodDef m[] = {{\"f\", f, METH_NOARGS, \"\"}, {0}};\n"
         "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"" +
         module +
         "\", 0, -1, m};\n"
         "PyMODINIT_FUNC PyInit_" +
         module + "(void) { return PyModule_Create(&d); }\n";
}

class Venv {
 public:
  explicit Venv(const TempDir& tmp, const std::string& name) : dir_(tmp / name) {
    CommandResult r = run("python3 -m venv --without-pip " + quote(dir_));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  std::string python() const { return dir_ + "/bin/python"; }
  std::string site() const {
    if (site_.empty()) {
      CommandResult r = run(quote(python()) + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'");
      site_ = r.out;
      while (!site_.empty() && site_.back() == '\n') site_.pop_back();
    }
    return site_;
  }
  void install(const std::vector<std::string>& wheels) const {
    std::string cmd =
        "python3 -m pip --python " + quote(python()) + " install --no-index --no-deps --disable-pip-version-check -q";
    for (const auto& w : wheels) cmd += " " + quote(w);
    CommandResult r = run(cmd);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
  }
  void uninstall(const std::string& name) const {
    CommandResult r = run("python3 -m pip --python " + quote(python()) +
                          " uninstall -y --disable-pip-version-check -q " + quote(name));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // The referee: a real import. Returns "" on success, else the ImportError's message.
  std::string import(const std::string& module) const {
    CommandResult r = run("cd / && " + quote(python()) + " -c " + quote("import " + module));
    if (r.status == 0) return "";
    std::string err = r.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    std::string last = err.substr(err.rfind('\n') + 1);
    const std::string prefix = "ImportError: ";
    return last.rfind(prefix, 0) == 0 ? last.substr(prefix.size()) : last;
  }
  // `envdoctor SUBCOMMAND --python VENV ARGS`.
  CommandResult envdoctor_run(const std::string& subcommand, const std::string& args) const {
    return run(quote(envdoctor()) + " " + subcommand + " --python " + quote(python()) + " " + args);
  }
  // `envdoctor check --json` on this venv, with `extra` arguments (--without, --with), its output
  // validated against data/schemas/check.schema.json.
  nlohmann::json check(int* status = nullptr, const std::string& extra = "") const {
    CommandResult r = run(quote(envdoctor()) + " check --json --python " + quote(python()) + " " + extra);
    if (status) *status = r.status;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);  // every scenario's output, held to its schema
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  }

 private:
  std::string dir_;
  mutable std::string site_;
};

// The end-to-end tests' common ground: gcc, python3 with pip, and Python.h (the test skips
// without them); a temporary directory with a wheels/ folder.
class VenvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || !have_tool("python3")) GTEST_SKIP() << "needs gcc and python3";
    if (run("python3 -m pip --version").status != 0) GTEST_SKIP() << "needs pip";
    fs::create_directories(tmp_ / "wheels");
    include_ = python_include();
    suffix_ = ext_suffix();
    if (!fs::exists(include_ + "/Python.h")) GTEST_SKIP() << "needs Python.h";
  }

  // Builds an extension module into `path`, linking `flags`.
  void build_ext(const std::string& path, const std::string& module, const std::string& decl, const std::string& call,
                 const std::string& flags) {
    build_shared(path, extension_source(module, decl, call), "-I" + quote(include_) + " " + flags, tmp_);
  }

  // DESIGN.md's first problem: fake-cudnn-cu12 and fake-cudnn-cu13 (9.1 both) install the same
  // fakenv/cudnn/lib/libfakecudnn.so.9; faketorch 2.0 requires fake-cudnn-cu13 and its _C needs
  // the library through RPATH $ORIGIN/../fakenv/cudnn/lib. The three wheels, in that order.
  std::vector<std::string> two_owners_wheels() {
    std::string lib = tmp_ / "build/libfakecudnn.so.9";
    build_shared(lib, "int cudnn_fn(void) { return 9; }", "-Wl,-soname,libfakecudnn.so.9", tmp_);
    std::string ext = tmp_ / ("build/faketorch/_C" + suffix_);
    build_ext(ext, "_C", "int cudnn_fn(void);", "cudnn_fn()", quote(lib) + " -Wl,-rpath,'$ORIGIN/../fakenv/cudnn/lib'");
    auto owner = [&](const std::string& name) {
      return make_wheel(tmp_ / "wheels", {{"name", name},
                                          {"version", "9.1"},
                                          {"tag", "py3-none-manylinux_2_17_x86_64"},
                                          {"purelib", false},
                                          {"paths", {{"fakenv/cudnn/lib/libfakecudnn.so.9", lib}}}});
    };
    std::string torch = make_wheel(tmp_ / "wheels", {{"name", "faketorch"},
                                                     {"version", "2.0"},
                                                     {"tag", "cp311-cp311-linux_x86_64"},
                                                     {"purelib", false},
                                                     {"requires", {"fake-cudnn-cu13"}},
                                                     {"files", {{"faketorch/__init__.py", ""}}},
                                                     {"paths", {{"faketorch/_C" + suffix_, ext}}}});
    return {owner("fake-cudnn-cu12"), owner("fake-cudnn-cu13"), torch};
  }

  TempDir tmp_;
  std::string include_, suffix_;
};

}  // namespace envdoctor::test
