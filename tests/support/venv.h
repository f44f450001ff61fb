// Real Python environments for end-to-end tests: a venv made with `python3 -m venv`, wheels
// installed and removed with the real pip, CPython extension modules built with gcc, and the
// referee every prediction is compared with: a real `python -c "import M"`.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/python_fixture.h"
#include "support/fixture.h"
#include "support/schema.h"
#include "support/shared_fixture.h"

namespace envdoctor::test {

// python3's include directory and EXT_SUFFIX, asked once a ctest run (support/shared_fixture.h).
inline std::string python_include() { return python3_facts().include; }
inline std::string ext_suffix() { return python3_facts().ext_suffix; }

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

// The findings of a report without the "new" mark, as comparable strings.
inline std::multiset<std::string> plain(const nlohmann::json& report) {
  std::multiset<std::string> out;
  for (nlohmann::json f : report["findings"]) {
    f.erase("new");
    out.insert(f.dump());
  }
  return out;
}

// The findings of `report` with `code`, in its order.
inline std::vector<nlohmann::json> findings(const nlohmann::json& report, const std::string& code) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

// The findings the change brought (marked "new").
inline std::vector<nlohmann::json> new_findings(const nlohmann::json& report) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& f : report["findings"])
    if (f["new"] == true) out.push_back(f);
  return out;
}

// Every file below `dir` (relative paths), bytecode caches left out: what pip removed or wrote.
inline std::set<std::string> files_under(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory() && e.path().string().find("__pycache__") == std::string::npos)
      out.insert(fs::relative(e.path(), dir).string());
  return out;
}

// What `python -c "import M"` said: "" when it succeeded, else the ImportError's message (the
// last line of stderr, without "ImportError: ").
inline std::string import_error(const CommandResult& r) {
  if (r.status == 0) return "";
  std::string err = r.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  std::string last = err.substr(err.rfind('\n') + 1);
  const std::string prefix = "ImportError: ";
  return last.rfind(prefix, 0) == 0 ? last.substr(prefix.size()) : last;
}

class Venv {
 public:
  // `BASE -m venv --without-pip OPTIONS TMP/NAME` (OPTIONS: --system-site-packages).
  explicit Venv(const TempDir& tmp, const std::string& name, const std::string& base = "python3",
                const std::string& options = "")
      : dir_(tmp / name) {
    CommandResult r = run(quote(base) + " -m venv --without-pip " + options + " " + quote(dir_));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  // An environment that another tool made at `dir` (`uv venv`), adopted as it is.
  static Venv existing(const std::string& dir) { return Venv(dir); }
  const std::string& dir() const { return dir_; }
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
  // The referee: a real import, with `variables` ("LD_LIBRARY_PATH=/x") in its environment.
  // Returns "" on success, else the ImportError's message.
  std::string import(const std::string& module, const std::string& variables = "") const {
    return import_error(run("cd / && " + (variables.empty() ? "" : "env " + variables + " ") + quote(python()) +
                            " -c " + quote("import " + module)));
  }
  // `envdoctor SUBCOMMAND --python VENV ARGS`.
  CommandResult envdoctor_run(const std::string& subcommand, const std::string& args) const {
    return run(quote(envdoctor()) + " " + subcommand + " --python " + quote(python()) + " " + args);
  }
  // `envdoctor check --json` on this venv, with `extra` arguments (--without, --with) and
  // `variables` in its environment, its output validated against data/schemas/check.schema.json.
  nlohmann::json check(int* status = nullptr, const std::string& extra = "", const std::string& variables = "") const {
    CommandResult r = run((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                          " check --json --python " + quote(python()) + " " + extra);
    if (status) *status = r.status;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("check", r.out);  // every scenario's output, held to its schema
    nlohmann::json report = nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
    if (extra.empty()) {
      expect_why_agrees(report, variables);
      expect_fixes_fix(report, variables);
    }
    return report;
  }

  // Every `fix_command` of a scenario, pasted into `env -i bash` from / as printed, must repair
  // the environment or fail with a non-zero status (issue 26, 7). Repaired means: checked again,
  // no finding that offered the command remains, and every extension module an error named, that
  // the new check finds no error about, really imports. The environment is put back afterwards,
  // file by file, so that the test goes on with what it built. Commands that change the system
  // (apt-get, conda outside this venv) are not pasted.
  void expect_fixes_fix(const nlohmann::json& report, const std::string& variables) const {
    if (!report.contains("findings")) return;
    std::vector<std::string> commands;
    for (const auto& f : report["findings"])
      if (f.contains("fix_command")) {
        std::string c = f["fix_command"];
        if (c.find(dir_) != std::string::npos && c.rfind("apt-get", 0) != 0 && c.rfind("sudo", 0) != 0 &&
            std::find(commands.begin(), commands.end(), c) == commands.end())
          commands.push_back(c);
      }
    // A test that checks the same state again (the same findings) pastes each command once.
    static std::set<std::string> pasted;
    for (const std::string& command : commands) {
      if (!pasted.insert(dir_ + "\n" + command + "\n" + report["findings"].dump()).second) continue;
      const std::string backup = dir_ + ".before-fix";
      std::filesystem::remove_all(backup);
      ASSERT_EQ(run("cp -a " + quote(dir_) + " " + quote(backup)).status, 0);
      // PIP_RETRIES=0: no package index is reachable here, and pip's retries only delay the
      // failure of a reinstall from one by 8 s.
      std::set<std::string> imported = importing_modules(variables);
      CommandResult pasted = run("cd / && env -i PIP_RETRIES=0 bash -c " + quote(command) + " </dev/null");
      if (pasted.status == 0) {
        expect_repaired(report, command, variables);
        // A fix never harms (issue 49, 5): every module that imported before the paste still does.
        for (const std::string& module : imported)
          EXPECT_EQ(import(module, variables), "") << "`" << command << "` broke " << module << ", which imported";
      }
      restore_tree(backup, dir_);
      std::filesystem::remove_all(backup);
    }
  }

  void expect_repaired(const nlohmann::json& before, const std::string& command, const std::string& variables) const {
    CommandResult r = run((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                          " check --json --python " + quote(python()));
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    nlohmann::json after = nlohmann::json::parse(r.out);
    auto same = [](const nlohmann::json& a, const nlohmann::json& b) {
      for (const char* k : {"code", "file", "library", "symbol", "version"})
        if (a.value(k, nlohmann::json()) != b.value(k, nlohmann::json())) return false;
      return true;
    };
    std::set<std::string> modules;
    for (const auto& f : before["findings"]) {
      if (f.value("fix_command", "") == command) {
        for (const auto& g : after["findings"]) {
          EXPECT_FALSE(same(f, g)) << "pasted, `" << command << "` exits 0 and leaves " << g.dump();
        }
      }
      if (f["severity"] == "error" && f["file"].is_string()) modules.insert(f["file"]);
    }
    for (const std::string& file : modules) {
      std::string module = module_name(file);
      if (module.empty() || !std::filesystem::exists(file)) continue;
      bool still = std::any_of(after["findings"].begin(), after["findings"].end(),
                               [&](const nlohmann::json& g) { return g["severity"] == "error" && g["file"] == file; });
      if (!still) {
        EXPECT_EQ(import(module, variables), "")
            << "after `" << command << "`, check finds no error in " << file << " but importing " << module << " fails";
      }
    }
  }

  // The extension modules under site-packages that import now, by their dotted names.
  std::set<std::string> importing_modules(const std::string& variables) const {
    std::set<std::string> out;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(site(), ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file()) continue;
      std::string module = module_name(it->path().string());
      if (!module.empty() && import(module, variables).empty()) out.insert(module);
    }
    return out;
  }

  // The dotted name Python imports FILE by, when FILE is an extension module under site-packages.
  std::string module_name(const std::string& file) const {
    const std::string prefix = site() + "/";
    if (file.rfind(prefix, 0) != 0) return "";
    std::string rel = file.substr(prefix.size());
    std::string base = std::filesystem::path(rel).filename().string();
    if (base.size() < 3 || base.compare(base.size() - 3, 3, ".so") != 0 || base.rfind("lib", 0) == 0) return "";
    std::string dir = std::filesystem::path(rel).parent_path().string();
    std::string name = base.substr(0, base.find('.'));
    for (char c : dir)
      if (c == '.' || c == '-') return "";  // inside a .libs or data directory: not a module
    for (char& c : dir)
      if (c == '/') c = '.';
    return dir.empty() ? name : dir + "." + name;
  }

  // Makes DIR what BACKUP holds, rewriting only what differs, so that files the fix left alone
  // keep their inodes (a running process that maps them sees no change).
  static void restore_tree(const std::string& backup, const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<fs::path> extra;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
      fs::path rel = it->path().lexically_relative(dir);  // never through a link
      if (!fs::exists(fs::symlink_status(fs::path(backup) / rel))) {
        extra.push_back(it->path());
        if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      }
    }
    for (const fs::path& p : extra) fs::remove_all(p);
    for (auto it = fs::recursive_directory_iterator(backup); it != fs::recursive_directory_iterator(); ++it) {
      fs::path to = fs::path(dir) / it->path().lexically_relative(backup);
      fs::file_status from = it->symlink_status(), now = fs::symlink_status(to);
      if (fs::is_symlink(from)) {
        if (fs::is_symlink(now) && fs::read_symlink(to) == fs::read_symlink(it->path())) continue;
        fs::remove_all(to);
        fs::copy_symlink(it->path(), to);
      } else if (fs::is_directory(from)) {
        if (!fs::is_directory(now) || fs::is_symlink(now)) {
          fs::remove_all(to);
          fs::create_directory(to);
        }
      } else if (!fs::is_regular_file(now) || fs::is_symlink(now) || slurp(it->path()) != slurp(to)) {
        fs::remove_all(to);
        fs::copy_file(it->path(), to);
        fs::permissions(to, fs::status(it->path()).permissions());
        fs::last_write_time(to, fs::last_write_time(it->path()));
      }
    }
  }

  // `why NAME` is `check` filtered to NAME: on every scenario a test checks, `why` of the first
  // packages and library the findings name gives exactly check's findings about it, and exit 1
  // exactly when one of them is an error.
  void expect_why_agrees(const nlohmann::json& report, const std::string& variables) const {
    if (!report.contains("findings")) return;
    auto key = [](std::string n) {
      for (char& c : n) c = c == '_' || c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return n;
    };
    auto names_of = [&](const nlohmann::json& f) {
      std::set<std::string> out;
      if (f.contains("package") && f["package"].is_string()) out.insert(key(f["package"]));
      if (f.contains("packages"))
        for (const auto& p : f["packages"]) out.insert(key(p));
      return out;
    };
    std::vector<std::string> packages;
    std::string library;
    for (const auto& f : report["findings"]) {
      for (const std::string& p : names_of(f))
        if (packages.size() < 2 && std::find(packages.begin(), packages.end(), p) == packages.end())
          packages.push_back(p);
      if (library.empty() && f.contains("library") && f["library"].is_string()) library = f["library"];
    }
    auto ask = [&](const std::string& name, auto about) {
      CommandResult w = run((variables.empty() ? "" : "env " + variables + " ") + quote(envdoctor()) +
                            " why --json --python " + quote(python()) + " " + quote(name));
      nlohmann::json expected = nlohmann::json::array();
      bool error = false, only_debian = true;
      for (const auto& f : report["findings"])
        if (about(f)) {
          expected.push_back(f);
          error |= f["severity"] == "error";
          only_debian &= f.value("installer", nlohmann::json()) == "debian";
        }
      // A system library's Debian package (libgomp1) is an owner check names, not a Python
      // distribution why can be asked about.
      if (w.status == 2 && only_debian) return;
      ASSERT_TRUE(w.status == 0 || w.status == 1) << "why " << name << ": " << w.err;
      nlohmann::json answer = nlohmann::json::parse(w.out);
      EXPECT_EQ(answer["findings"], expected) << "why " << name << " says other findings than check about it";
      EXPECT_EQ(w.status, error ? 1 : 0) << "why " << name;
    };
    for (const std::string& p : packages) ask(p, [&](const nlohmann::json& f) { return names_of(f).count(p) != 0; });
    if (!library.empty() && library.find('/') == std::string::npos && !report["findings"].empty() &&
        std::none_of(packages.begin(), packages.end(), [&](const std::string& p) { return key(library) == p; }))
      ask(library, [&](const nlohmann::json& f) {
        if (!f.contains("library") || !f["library"].is_string()) return false;
        std::string l = f["library"];
        return l == library || std::filesystem::path(l).filename() == library;
      });
  }

 private:
  explicit Venv(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  mutable std::string site_;
};

// A pip wheel that ships with one of this machine's interpreters (ensurepip's bundle): the
// newest for `newest`, else the newest older than 22.2 ("" when there is none; older ones may not
// run on this Python at all).
inline std::string bundled_pip_wheel(bool newest) {
  CommandResult r =
      run("ls /root/.pyenv/versions/*/lib/python3*/ensurepip/_bundled/pip-*.whl "
          "/usr/lib/python3*/ensurepip/_bundled/pip-*.whl /usr/share/python-wheels/pip-*.whl 2>/dev/null | "
          "awk -F/ '{print $NF\" \"$0}' | sort -V | awk '{print $2}'");
  std::vector<std::string> wheels;
  size_t pos = 0;
  for (size_t nl; (nl = r.out.find('\n', pos)) != std::string::npos; pos = nl + 1)
    wheels.push_back(r.out.substr(pos, nl - pos));
  if (wheels.empty()) return "";
  if (newest) return wheels.back();
  for (auto it = wheels.rbegin(); it != wheels.rend(); ++it) {
    const std::string& w = *it;
    std::string name = fs::path(w).filename().string();  // pip-22.0.4-py3-none-any.whl
    std::string version = name.substr(4, name.find('-', 4) - 4);
    int major = std::stoi(version), minor = std::stoi(version.substr(version.find('.') + 1));
    if ((major < 22 || (major == 22 && minor < 2)) && name.find("py3") != std::string::npos) return w;
  }
  return "";
}

// The end-to-end tests' common ground: gcc, python3 with pip, and Python.h (the test skips
// without them); a temporary directory with a wheels/ folder.
class VenvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc") || !have_tool("python3")) GTEST_SKIP() << "needs gcc and python3";
    if (!python3_facts().pip) GTEST_SKIP() << "needs pip";
    fs::create_directories(tmp_ / "wheels");
    include_ = python_include();
    suffix_ = ext_suffix();
    if (!fs::exists(include_ + "/Python.h")) GTEST_SKIP() << "needs Python.h";
  }

  // pip unpacked once per test process into a directory of its own (a pure wheel unpacked is the
  // package and its .dist-info, as get-pip runs it), which each venv reaches through a .pth file: a
  // real pip that `VENV/bin/python -m pip` runs, without ensurepip's 15 s per venv.
  static std::string pip_dir(const std::string& wheel, const std::string& name) {
    static TempDir dirs;
    std::string dir = dirs / name;
    if (fs::exists(dir)) return dir;
    CommandResult r = run("python3 -m zipfile -e " + quote(wheel) + " " + quote(dir));
    return r.status == 0 ? dir : "";
  }
  static std::string shared_pip() {
    static const std::string dir = bundled_pip_wheel(true).empty() ? "" : pip_dir(bundled_pip_wheel(true), "pip");
    return dir;
  }
  static void give_pip(const Venv& venv, const std::string& dir) {
    std::ofstream(venv.site() + "/envdoctor_test_pip.pth") << dir << "\n";
  }

  // A venv whose own `python -m pip` works.
  std::unique_ptr<Venv> venv_with_pip(const std::string& name = "v") {
    auto venv = std::make_unique<Venv>(tmp_, name);
    give_pip(*venv, shared_pip());
    return venv;
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

  std::string wheel(nlohmann::json spec) { return make_wheel(tmp_ / "wheels", std::move(spec)); }
  // Package `name` 1.0, for this interpreter: name/__init__.py imports its extension module
  // `module` (by default `_name`), and `paths` maps the wheel's paths to the files built for it
  // (the module and what it vendors).
  std::string module_package(const std::string& name, nlohmann::json paths, const std::string& module = "") {
    std::string imported = module.empty() ? "_" + name : module;
    return platlib_wheel(name, "1.0", std::move(paths), {{name + "/__init__.py", "from . import " + imported + "\n"}});
  }
  // A wheel whose files go to platlib, for this interpreter (cp311, linux_x86_64).
  std::string platlib_wheel(const std::string& name, const std::string& version, nlohmann::json paths,
                            nlohmann::json files = nlohmann::json::object(),
                            nlohmann::json requires_dist = nlohmann::json::array()) {
    return wheel({{"name", name},
                  {"version", version},
                  {"tag", "cp311-cp311-linux_x86_64"},
                  {"purelib", false},
                  {"paths", paths},
                  {"files", files},
                  {"requires", requires_dist}});
  }

  // DESIGN.md's second problem: causal-conv1d 1.5.0 (requires nvidia-cuda-runtime) whose
  // extension causal_conv1d/_cc links libcudart.so.12 and looks in $ORIGIN/../nvidia/cu13/lib,
  // where nvidia-cuda-runtime 13.0.48 ships libcudart.so.13 only. The wheels runtime, extension.
  std::pair<std::string, std::string> cuda12_extension_wheels() {
    std::string cudart13 = tmp_ / "build/13/libcudart.so.13";
    build_shared(cudart13, "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }", "-Wl,-soname,libcudart.so.13", tmp_);
    std::string cudart12 = tmp_ / "build/12/libcudart.so.12";
    build_shared(cudart12, "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }", "-Wl,-soname,libcudart.so.12", tmp_);
    std::string ext = tmp_ / ("build/causal_conv1d/_cc" + suffix_);
    build_ext(ext, "_cc", "int cudaGetDeviceCount(int*);", "({int n; cudaGetDeviceCount(&n); n;})",
              quote(cudart12) + " -Wl,-rpath,'$ORIGIN/../nvidia/cu13/lib'");
    std::string runtime =
        platlib_wheel("nvidia-cuda-runtime", "13.0.48", {{"nvidia/cu13/lib/libcudart.so.13", cudart13}});
    std::string extension = platlib_wheel("causal-conv1d", "1.5.0", {{"causal_conv1d/_cc" + suffix_, ext}},
                                          {{"causal_conv1d/__init__.py", ""}}, {"nvidia-cuda-runtime"});
    return {runtime, extension};
  }

  // An upgrade that drops a symbol: corepkg 1.0 ships libcore.so with core_a and core_b, 2.0
  // without core_b; userpkg 1.0 (requires corepkg) has an extension _u that calls core_b through
  // RPATH $ORIGIN/../corepkg/lib. The wheels core1, core2, user.
  std::tuple<std::string, std::string, std::string> dropped_symbol_wheels() {
    std::string v1 = tmp_ / "build/v1/libcore.so";
    std::string v2 = tmp_ / "build/v2/libcore.so";
    build_shared(v1, "int core_a(void) { return 1; } int core_b(void) { return 2; }", "-Wl,-soname,libcore.so", tmp_);
    build_shared(v2, "int core_a(void) { return 1; }", "-Wl,-soname,libcore.so", tmp_);
    std::string ext = tmp_ / ("build/user/_u" + suffix_);
    build_ext(ext, "_u", "int core_b(void);", "core_b()", quote(v1) + " -Wl,-rpath,'$ORIGIN/../corepkg/lib'");
    std::string core1 =
        platlib_wheel("corepkg", "1.0", {{"corepkg/lib/libcore.so", v1}}, {{"corepkg/__init__.py", ""}});
    std::string core2 =
        platlib_wheel("corepkg", "2.0", {{"corepkg/lib/libcore.so", v2}}, {{"corepkg/__init__.py", ""}});
    std::string user =
        platlib_wheel("userpkg", "1.0", {{"userpkg/_u" + suffix_, ext}}, {{"userpkg/__init__.py", ""}}, {"corepkg"});
    return {core1, core2, user};
  }

  TempDir tmp_;
  std::string include_, suffix_;
};

}  // namespace envdoctor::test
