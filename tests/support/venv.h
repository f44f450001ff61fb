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
  return "#include <Python.h>\n" + decl +
         "\nstatic PyObject* f(PyObject* s, PyObject* a) { return PyLong_FromLong(" + call +
         "); }\n"
         "static PyMethodDef m[] = {{\"f\", f, METH_NOARGS, \"\"}, {0}};\n"
         "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"" + module + "\", 0, -1, m};\n"
         "PyMODINIT_FUNC PyInit_" + module + "(void) { return PyModule_Create(&d); }\n";
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
    std::string cmd = "python3 -m pip --python " + quote(python()) +
                      " install --no-index --no-deps --disable-pip-version-check -q";
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

}  // namespace envdoctor::test
