// `envdoctor ps PID` on real Python processes started here, with /proc/PID/maps itself as the
// referee: a healthy process (no findings), libraries replaced (rename over) and deleted while it
// runs, two copies of one SONAME loaded by ctypes, and another user's process (permission denied,
// exit 2).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// A process started in the background that has done its work once `ready` exists; killed at the end.
class Running {
 public:
  Running(const std::string& command, const std::string& ready) {
    CommandResult r = run(command + " >/dev/null 2>&1 & echo $!");
    pid_ = std::atoi(r.out.c_str());
    for (int i = 0; i < 300 && !fs::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(fs::exists(ready)) << command;
  }
  ~Running() {
    if (pid_ > 0) kill(pid_, SIGKILL);
  }
  int pid() const { return pid_; }
  // The referee: the lines of /proc/PID/maps that name `needle`.
  std::vector<std::string> maps(const std::string& needle) const {
    std::vector<std::string> out;
    std::ifstream in("/proc/" + std::to_string(pid_) + "/maps");
    for (std::string line; std::getline(in, line);)
      if (line.find(needle) != std::string::npos) out.push_back(line);
    return out;
  }

 private:
  int pid_ = -1;
};

class PsTest : public VenvTest {
 protected:
  // cleanpkg 1.0: cleanpkg/_core, which needs cleanpkg/lib/libclean.so by RUNPATH.
  void install_clean(const Venv& venv) {
    std::string lib = tmp_ / "build/clean/cleanpkg/lib/libclean.so";
    build_shared(lib, "int clean_fn(void) { return 7; }", "-Wl,-soname,libclean.so", tmp_);
    std::string ext = tmp_ / ("build/clean/cleanpkg/_core" + suffix_);
    build_ext(ext, "_core", "int clean_fn(void);", "clean_fn()",
              "-L" + quote(tmp_ / "build/clean/cleanpkg/lib") + " -lclean -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'");
    venv.install(
        {module_package("cleanpkg", {{"cleanpkg/lib/libclean.so", lib}, {"cleanpkg/_core" + suffix_, ext}}, "_core")});
  }
  // `python -c SCRIPT` in the background, with `variables` in its environment, ready when SCRIPT has run.
  std::unique_ptr<Running> start(const Venv& venv, const std::string& script, const std::string& variables = "") {
    std::string ready = tmp_ / "ready";
    fs::remove(ready);
    std::string body = script + "\nopen(" + json(ready).dump() + ", 'w').close()\nimport time\ntime.sleep(120)\n";
    return std::make_unique<Running>("cd / && exec " + (variables.empty() ? "" : "env " + variables + " ") +
                                         quote(venv.python()) + " -c " + quote(body),
                                     ready);
  }
  json ps(int pid, int* status) {
    CommandResult r = run(quote(envdoctor()) + " ps " + std::to_string(pid) + " --json");
    *status = r.status;
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    if (!r.out.empty()) expect_schema_valid("ps", r.out);
    return json::parse(r.out.empty() ? "{}" : r.out);
  }
};

TEST_F(PsTest, HealthyProcessHasNoFindings) {
  Venv venv(tmp_, "healthy");
  install_clean(venv);
  auto p = start(venv, "import cleanpkg");
  ASSERT_EQ(p->maps("libclean.so").empty(), false);
  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
  EXPECT_TRUE(report["differences"].empty()) << report.dump(1);
  EXPECT_EQ(report["process"]["python"], venv.python());
  EXPECT_EQ(report["process"]["ld_library_path"], nullptr);
  std::string lib = venv.site() + "/cleanpkg/lib/libclean.so";
  std::string ext = venv.site() + "/cleanpkg/_core" + suffix_;
  bool saw_lib = false, saw_ext = false;
  for (const json& o : report["objects"]) {
    if (o["path"] == lib) {
      saw_lib = true;
      EXPECT_EQ(o["owner"], "cleanpkg 1.0");
      EXPECT_EQ(o["soname"], "libclean.so");
      EXPECT_EQ(o["found"], "NEEDED libclean.so of " + ext + ": RUNPATH " + venv.site() + "/cleanpkg/lib") << o.dump();
    }
    if (o["path"] == ext) {
      saw_ext = true;
      EXPECT_EQ(o["found"], "imported (an extension module)");
    }
  }
  EXPECT_TRUE(saw_lib && saw_ext) << report.dump(1);
  CommandResult text = run(quote(envdoctor()) + " ps " + std::to_string(p->pid()));
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(text.out.ends_with("\nNothing replaced on disk, no library loaded twice.\n")) << text.out;
}

// LD_PRELOAD, by path and by a name ld.so searches (here through LD_LIBRARY_PATH): the referee is
// /proc/PID/maps, which holds both, and ps says each was preloaded, not dlopened.
TEST_F(PsTest, PreloadedLibrariesAreSaidPreloaded) {
  Venv venv(tmp_, "preload");
  std::string by_path = tmp_ / "pre/libbypath.so";
  std::string by_name = tmp_ / "pre/libbyname.so";
  build_shared(by_path, "int by_path(void) { return 1; }", "-Wl,-soname,libbypath.so", tmp_);
  build_shared(by_name, "int by_name(void) { return 2; }", "-Wl,-soname,libbyname.so", tmp_);
  auto p = start(venv, "import sys",
                 "LD_LIBRARY_PATH=" + quote(tmp_ / "pre") + " LD_PRELOAD=" + quote(by_path + ":libbyname.so"));
  ASSERT_EQ(p->maps("libbypath.so").size() > 0 && p->maps("libbyname.so").size() > 0, true);
  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 0) << report.dump(1);
  int seen = 0;
  for (const json& o : report["objects"])
    if (o["path"] == by_path || o["path"] == by_name) {
      ++seen;
      EXPECT_EQ(o["found"], "preloaded (LD_PRELOAD)") << o.dump();
    }
  EXPECT_EQ(seen, 2) << report.dump(1);
}

// libclean.so replaced as pip replaces files (a new file renamed over the path: a new inode), and a
// library loaded with ctypes deleted, both while the process runs.
TEST_F(PsTest, LibraryReplacedAndLibraryDeletedWhileRunning) {
  Venv venv(tmp_, "replaced");
  install_clean(venv);
  std::string gone = tmp_ / "gone/libgone.so";
  build_shared(gone, "int gone_fn(void) { return 1; }", "-Wl,-soname,libgone.so", tmp_);
  auto p = start(venv, "import cleanpkg, ctypes\nctypes.CDLL(" + json(gone).dump() + ")");
  std::string lib = venv.site() + "/cleanpkg/lib/libclean.so";
  fs::copy_file(lib, lib + ".new");
  fs::rename(lib + ".new", lib);
  fs::remove(gone);
  // The referee says what changed: maps marks both old inodes " (deleted)" (a rename over a path
  // unlinks the file it held); only one path is empty now.
  ASSERT_FALSE(p->maps(gone + " (deleted)").empty());
  ASSERT_FALSE(p->maps(lib + " (deleted)").empty());
  ASSERT_FALSE(fs::exists(gone));
  ASSERT_TRUE(fs::exists(lib));

  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 0);  // warnings
  auto replaced = findings(report, "library-replaced-on-disk");
  ASSERT_EQ(replaced.size(), 2u) << report.dump(1);
  std::map<std::string, json> by_file;
  for (const json& f : replaced) by_file[f["file"]] = f;
  ASSERT_TRUE(by_file.count(lib) && by_file.count(gone)) << report.dump(1);
  EXPECT_EQ(by_file[lib]["package"], "cleanpkg");
  EXPECT_EQ(by_file[lib]["message"].get<std::string>().find(lib + ": the path now holds another file (inode "), 0u)
      << by_file[lib]["message"];
  EXPECT_EQ(by_file[gone]["message"].get<std::string>().find(gone + " (deleted): process " + std::to_string(p->pid()) +
                                                             " runs a file that was deleted after it was loaded"),
            0u)
      << by_file[gone]["message"];
  for (const json& o : report["objects"]) {
    if (o["path"] == lib) {
      EXPECT_TRUE(o["replaced"] == true && o["deleted"] == false) << o.dump();
    }
    if (o["path"] == gone) {
      EXPECT_TRUE(o["replaced"] == false && o["deleted"] == true) << o.dump();
    }
  }
  EXPECT_NE(by_file[gone]["hint"].get<std::string>().find("restart process " + std::to_string(p->pid())),
            std::string::npos);
}

// The issue-26 case: extpkg's extension needs libprov.so.1 (NEEDED, RPATH $ORIGIN/../provlib/lib),
// which provlib ships; `pip install --force-reinstall provlib==1.0` runs while a Python that
// imported extpkg sleeps. pip moves provlib/ aside to its stash ~rovlib/ (req_uninstall.py,
// AdjacentTempDirectory), installs the new copy, deletes the stash: maps then names the stash
// path, deleted. The referees are /proc/PID/maps, before and after, and the real pip; the
// fix_command, pasted into `env -i bash`, restarts the process, and the new one runs the file on disk.
TEST_F(PsTest, ReinstallUnderARunningProcessMapsPipsStashBackToTheLibrary) {
  Venv venv(tmp_, "reinstall");
  std::string lib = tmp_ / "build/prov/lib/libprov.so.1";
  build_shared(lib, "int prov_fn(void) { return 3; }", "-Wl,-soname,libprov.so.1", tmp_);
  std::string ext = tmp_ / ("build/ext/extpkg/_ext" + suffix_);
  build_ext(ext, "_ext", "int prov_fn(void);", "prov_fn()",
            quote(lib) + " -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../provlib/lib'");
  venv.install({platlib_wheel("provlib", "1.0", {{"provlib/lib/libprov.so.1", lib}}, {{"provlib/__init__.py", ""}}),
                module_package("extpkg", {{"extpkg/_ext" + suffix_, ext}}, "_ext")});
  std::string ready = tmp_ / "ready";
  // The process writes its pid to `ready` once it has imported extpkg, so that a restarted one is found.
  std::string script = "import extpkg, os\nopen(" + json(ready).dump() +
                       ", 'w').write(str(os.getpid()))\nimport time\ntime.sleep(120)\n";
  // Started with an LD_LIBRARY_PATH, which the restart must keep (the new process's environ is the referee).
  Running p("cd / && exec env LD_LIBRARY_PATH=/nonexistent-ld " + quote(venv.python()) + " -c " + quote(script), ready);
  std::string own = venv.site() + "/provlib/lib/libprov.so.1";
  std::string installed_ext = venv.site() + "/extpkg/_ext" + suffix_;
  ASSERT_FALSE(p.maps(own).empty());

  // Before the reinstall: every "NEEDED X of F" names an F that the process has mapped.
  std::vector<std::string> mapped = p.maps("/");
  auto is_mapped = [&](const std::string& file) {
    std::error_code ec;
    for (const std::string& line : mapped) {
      std::string path = line.substr(line.find('/'));
      if (path.ends_with(" (deleted)")) path.resize(path.size() - 10);
      if (path == file || fs::equivalent(path, file, ec)) return true;
    }
    return false;
  };
  int status = -1;
  json before = ps(p.pid(), &status);
  EXPECT_EQ(status, 0) << before.dump(1);
  size_t attributed = 0;
  for (const json& o : before["objects"]) {
    std::string found = o["found"];
    if (found.rfind("NEEDED ", 0) != 0) continue;
    ++attributed;
    std::string consumer = found.substr(found.find(" of ") + 4);
    consumer.resize(consumer.find(": "));
    EXPECT_TRUE(is_mapped(consumer)) << o.dump() << " names a consumer the process has not mapped";
  }
  EXPECT_GE(attributed, 2u) << before.dump(1);  // libprov.so.1 and libc.so.6 at least

  CommandResult pip = run("python3 -m pip --python " + quote(venv.python()) +
                          " install --force-reinstall --no-deps --no-index --disable-pip-version-check -q -f " +
                          quote(tmp_ / "wheels") + " provlib==1.0");
  ASSERT_EQ(pip.status, 0) << pip.err;
  // pip stashes the directory whose every file it uninstalls: provlib/ (with __init__.py), as ~rovlib/.
  std::string stash = venv.site() + "/~rovlib/lib/libprov.so.1";
  ASSERT_FALSE(p.maps(stash + " (deleted)").empty()) << "pip stashed provlib elsewhere: " << p.maps("libprov")[0];
  ASSERT_FALSE(fs::exists(venv.site() + "/~rovlib"));
  ASSERT_TRUE(fs::exists(own));

  json after = ps(p.pid(), &status);
  EXPECT_EQ(status, 0) << after.dump(1);
  const json* object = nullptr;
  for (const json& o : after["objects"])
    if (o["path"] == own) object = &o;
  ASSERT_NE(object, nullptr) << after.dump(1);
  EXPECT_EQ((*object)["mapped_as"], stash);
  EXPECT_EQ((*object)["replaced"], true);
  EXPECT_EQ((*object)["deleted"], false);
  EXPECT_EQ((*object)["owner"], "provlib 1.0");
  EXPECT_EQ((*object)["soname"], "libprov.so.1");
  EXPECT_EQ((*object)["found"].get<std::string>().rfind("NEEDED libprov.so.1 of " + installed_ext + ": RPATH ", 0), 0u)
      << object->dump();
  auto replaced = findings(after, "library-replaced-on-disk");
  ASSERT_EQ(replaced.size(), 1u) << after.dump(1);
  EXPECT_EQ(replaced[0]["file"], own);
  EXPECT_EQ(replaced[0]["package"], "provlib");
  std::string message = replaced[0]["message"];
  EXPECT_EQ(message.find(own + ": the path now holds another file (inode "), 0u) << message;
  EXPECT_NE(message.find("as " + stash + ", pip's copy of provlib during a reinstall, since deleted"),
            std::string::npos)
      << message;
  std::string pid = std::to_string(p.pid());
  std::string fix = replaced[0].value("fix_command", "");
  EXPECT_EQ(fix,
            "kill " + pid + " && cd / && env LD_LIBRARY_PATH=/nonexistent-ld " + venv.python() + " -c " + quote(script))
      << fix;
  CommandResult text = run(quote(envdoctor()) + " ps " + pid);
  EXPECT_NE(text.out.find("\n  " + own + " (replaced on disk)\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n    fix: kill " + pid + " && "), std::string::npos) << text.out;

  // The fix pasted into a clean shell: the old process ends, a new one runs the installed file.
  fs::remove(ready);
  run("env -i bash -c " + quote(fix) + " >/dev/null 2>&1 &");
  for (int i = 0; i < 100 && !fs::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(ready)) << "the fix did not restart the process: " << fix;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the pid is written
  std::ifstream in(ready);
  int restarted = 0;
  in >> restarted;
  ASSERT_GT(restarted, 0);
  struct Reaped {
    int pid;
    ~Reaped() { kill(pid, SIGKILL); }
  } reaped{restarted};
  // Gone, or a zombie its parent has not reaped yet (state Z in /proc/PID/stat).
  auto runs = [&] {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t paren = text.rfind(") ");
    return paren != std::string::npos && text.compare(paren + 2, 1, "Z") != 0;
  };
  for (int i = 0; i < 50 && runs(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(runs()) << "the old process still runs";
  json now = ps(restarted, &status);
  EXPECT_EQ(status, 0) << now.dump(1);
  EXPECT_EQ(now["process"]["ld_library_path"], "/nonexistent-ld");
  EXPECT_TRUE(findings(now, "library-replaced-on-disk").empty()) << now.dump(1);
}

// ctypes.CDLL of two paths with one SONAME: dlopen by path matches no loaded SONAME, and the files
// differ, so glibc maps both (maps is the referee). ps must say so.
TEST_F(PsTest, TwoCopiesOfOneSonameLoadedByPath) {
  Venv venv(tmp_, "copies");
  std::string a = tmp_ / "a/libv.so.1", b = tmp_ / "b/libv.so.1";
  build_shared(a, "int v(void) { return 1; }", "-Wl,-soname,libv.so.1", tmp_);
  build_shared(b, "int v(void) { return 2; }", "-Wl,-soname,libv.so.1", tmp_);
  auto p = start(venv, "import ctypes\nctypes.CDLL(" + json(a).dump() + ")\nctypes.CDLL(" + json(b).dump() + ")");
  bool both_mapped = !p->maps(a).empty() && !p->maps(b).empty();
  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 0);
  auto duplicates = findings(report, "duplicate-library");
  ASSERT_EQ(duplicates.size(), both_mapped ? 1u : 0u) << report.dump(1);
  ASSERT_TRUE(both_mapped) << "glibc reused the first copy: the finding must then be absent, as it is";
  EXPECT_EQ(duplicates[0]["library"], "libv.so.1");
  EXPECT_EQ(duplicates[0]["message"], "2 copies of libv.so.1 loaded in process " + std::to_string(p->pid()) + ": " + a +
                                          " (no package), " + b + " (no package)");
}

// Another user's process: nobody's `sleep`, examined as daemon. maps needs PTRACE_MODE_READ.
TEST_F(PsTest, AnotherUsersProcessIsAPermissionError) {
  if (geteuid() != 0 || !have_tool("setpriv")) GTEST_SKIP() << "needs root and setpriv to start another user's process";
  std::string ready = tmp_ / "nobody-ready";
  fs::permissions(tmp_.path(), fs::perms::all);
  Running p(
      "setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c " + quote("touch " + ready + "; exec sleep 120"),
      ready);
  CommandResult r = run("setpriv --reuid=daemon --regid=daemon --clear-groups " + quote(envdoctor()) + " ps " +
                        std::to_string(p.pid()));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "envdoctor: process " + std::to_string(p.pid()) + ": permission denied reading /proc/" +
                       std::to_string(p.pid()) +
                       "/maps (another user's process: run envdoctor as that user, or as root)\n");
  CommandResult none = run(quote(envdoctor()) + " ps 999999999");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err, "envdoctor: no process 999999999\n");
}

// Two OpenMP runtimes (gcc's libgomp and an auditwheel-style hashed copy) and CUDA runtimes of two
// majors (gcc-built libraries with the SONAMEs libcudart.so.12 and .13), loaded by ctypes into one
// process that runs with an LD_LIBRARY_PATH. maps is the referee; ps judges them with check's
// own verdicts.
TEST_F(PsTest, OpenmpRuntimesAndCudaMajorsLoadedTogether) {
  std::string gomp = run("gcc -print-file-name=libgomp.so.1").out;
  while (!gomp.empty() && gomp.back() == '\n') gomp.pop_back();
  if (!fs::exists(gomp)) GTEST_SKIP() << "needs gcc's libgomp.so.1";
  gomp = fs::canonical(gomp).string();
  Venv venv(tmp_, "mixed");
  std::string hashed = tmp_ / "libs/libgomp-a34b3233.so.1";
  build_shared(hashed,
               "int omp_get_num_threads(void) { return 1; }\n"
               "void GOMP_parallel(void (*fn)(void*), void* data, unsigned n, unsigned flags) { fn(data); }\n",
               "-Wl,-soname,libgomp-a34b3233.so.1", tmp_);
  std::string rt12 = tmp_ / "libs/libcudart.so.12", rt13 = tmp_ / "libs/libcudart.so.13";
  build_shared(rt12, "int cudart12_fn(void) { return 12; }", "-Wl,-soname,libcudart.so.12", tmp_);
  build_shared(rt13, "int cudart13_fn(void) { return 13; }", "-Wl,-soname,libcudart.so.13", tmp_);
  std::string script = "import ctypes\n";
  for (const std::string& lib : {gomp, hashed, rt12, rt13}) script += "ctypes.CDLL(" + json(lib).dump() + ")\n";
  auto p = start(venv, script, "LD_LIBRARY_PATH=/nonexistent");
  for (const std::string& lib : {hashed, rt12, rt13}) ASSERT_FALSE(p->maps(lib).empty()) << lib;
  ASSERT_FALSE(p->maps("libgomp.so.1").empty());

  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 1) << report.dump(1);  // two CUDA majors in one process: an error
  EXPECT_EQ(report["process"]["ld_library_path"], "/nonexistent");
  std::string pid = std::to_string(p->pid());
  auto openmp = findings(report, "openmp-runtime-mix");
  ASSERT_EQ(openmp.size(), 1u) << report.dump(1);
  EXPECT_EQ(openmp[0]["severity"], "warning");
  std::string message = openmp[0]["message"];
  EXPECT_EQ(message.find("2 OpenMP runtimes are loaded in process " + pid + ": "), 0u) << message;
  EXPECT_NE(message.find("libgomp-a34b3233.so.1 (GNU libgomp, " + hashed + ", no package)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("libgomp.so.1 (GNU libgomp, "), std::string::npos) << message;
  auto cuda = findings(report, "cuda-major-mix");
  ASSERT_EQ(cuda.size(), 1u) << report.dump(1);
  EXPECT_EQ(cuda[0]["severity"], "error");
  EXPECT_EQ(cuda[0]["message"], "CUDA 12 and 13 libraries loaded in process " + pid + ": CUDA 12: libcudart.so.12 (" +
                                    rt12 + ", no package); CUDA 13: libcudart.so.13 (" + rt13 + ", no package)");
}

// A copy of libclean.so loaded by ctypes before `import cleanpkg`: the module's NEEDED libclean.so
// matches the loaded SONAME (elf/dl-load.c: _dl_map_object), so the process runs that copy where
// check predicts cleanpkg's own (RUNPATH). maps is the referee: cleanpkg's copy is not mapped.
TEST_F(PsTest, LoadedOtherThanCheckPredicts) {
  Venv venv(tmp_, "differs");
  install_clean(venv);
  std::string other = tmp_ / "other/libclean.so";
  build_shared(other, "int clean_fn(void) { return 8; }", "-Wl,-soname,libclean.so", tmp_);
  auto p = start(venv, "import ctypes\nctypes.CDLL(" + json(other).dump() + ")\nimport cleanpkg");
  std::string own = venv.site() + "/cleanpkg/lib/libclean.so";
  ASSERT_FALSE(p->maps(other).empty());
  ASSERT_TRUE(p->maps(own).empty());

  int status = -1;
  json report = ps(p->pid(), &status);
  EXPECT_EQ(status, 0) << report.dump(1);
  std::string ext = venv.site() + "/cleanpkg/_core" + suffix_;
  EXPECT_EQ(
      report["differences"],
      json::parse(R"([{"soname": "libclean.so", "loaded": )" + json(other).dump() +
                  R"(, "loaded_owner": "no package", "predicted": [)" + json(own).dump() + R"(], "predicted_by": )" +
                  json("NEEDED libclean.so of " + ext + ": RUNPATH " + venv.site() + "/cleanpkg/lib").dump() + "}]"))
      << report.dump(1);
  CommandResult text = run(quote(envdoctor()) + " ps " + std::to_string(p->pid()));
  EXPECT_NE(text.out.find("Loaded other than check predicts:\n  libclean.so: loaded " + other +
                          " (no package)\n    check predicts " + own + " (NEEDED libclean.so of " + ext),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace envdoctor::test
