// Triton's own search for the driver, libcuda_dirs() at its first compile, as the rules
// triton-2-* and triton-3-* of data/package_loads.json say it (one per shape of its releases),
// refereed by that search itself in a chroot: a root with Debian's python3 and /sbin/ldconfig
// (fixtures/chroot_venv.h), a venv holding a triton-shaped package whose libcuda_dirs() has a
// release's shape, and a libcuda.so.1. With ld.so.cache naming a copy since moved to a default
// directory, the loader (ctypes) still finds the driver, but Triton's assertion fails, in words
// envdoctor gives to the letter; once ldconfig has run, both agree that it works, and
// TRITON_LIBCUDA_PATH skips the search where the release reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/chroot_venv.h"
#include "fixtures/fixture.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// envdoctor's findings for triton on `root`'s venv, with `variables` set (one at most). Under
// --root, LD_LIBRARY_PATH is modelled only where --ld-library-path gives it (this machine's is not
// the root's): the value the chroot's python gets is given so.
std::vector<json> triton_findings(const std::string& root, const std::string& variables, std::string* report) {
  const std::string llp = "LD_LIBRARY_PATH=";
  std::string args = variables.rfind(llp, 0) == 0 ? "--ld-library-path " + quote(variables.substr(llp.size())) : "";
  return venv_findings(root, "triton", "-u TRITON_LIBCUDA_PATH -u LD_LIBRARY_PATH " + variables, args, report);
}

class TritonDriver : public ChrootVenv {};

// Triton 3's libcuda_dirs() as its releases write it (triton/backends/nvidia/driver.py): `head`
// (the imports, the decorator and how the variable is read, Python lines ending in newlines), then
// the search of the ld.so.cache and LD_LIBRARY_PATH and the assertion. Installed as triton `version`
// (with `files` beside it) into `site` in place of any triton there; the first time, ld.so.cache
// made while /opt/drv/libcuda.so.1 was there, and the driver then moved to a default directory.
void install_triton3(const TempDir& tmp, const std::string& root, const std::string& site, const std::string& version,
                     const std::string& head, json files) {
  std::string driver =
      head +
      "\n"
      "    libs = subprocess.check_output([\"/sbin/ldconfig\", \"-p\"]).decode(errors=\"ignore\")\n"
      "    # each line looks like the following:\n"
      "    # libcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1\n"
      "    locs = [line.split()[-1] for line in libs.splitlines() if \"libcuda.so.1\" in line]\n"
      "    dirs = [os.path.dirname(loc) for loc in locs]\n"
      "    env_ld_library_path = os.getenv(\"LD_LIBRARY_PATH\")\n"
      "    if env_ld_library_path and not dirs:\n"
      "        dirs = [dir for dir in env_ld_library_path.split(\":\") if os.path.exists(os.path.join(dir, \"libcuda.so.1\"))]\n"
      "    msg = 'libcuda.so cannot found!\\n'\n"
      "    if locs:\n"
      "        msg += 'Possible files are located at %s.' % str(locs)\n"
      "        msg += 'Please create a symlink of libcuda.so to any of the files.'\n"
      "    else:\n"
      "        msg += 'Please make sure GPU is set up and then run \"/sbin/ldconfig\"'\n"
      "        msg += ' (requires sudo) to refresh the linker cache.'\n"
      "    assert any(os.path.exists(os.path.join(path, 'libcuda.so.1')) for path in dirs), msg\n"
      "    return dirs\n"
      "\n"
      "def library_dirs():\n"
      "    return libcuda_dirs()\n";
  files["triton/__init__.py"] = "";
  files["triton/backends/__init__.py"] = "";
  files["triton/backends/nvidia/__init__.py"] = "";
  files["triton/backends/nvidia/driver.py"] = driver;
  fs::create_directories(tmp / "wheels");
  std::string wheel =
      make_wheel(tmp / "wheels", {{"name", "triton"}, {"version", version}, {"tag", "py3-none-any"}, {"files", files}});
  sh("rm -rf " + quote(site + "/triton") + " " + quote(site) + "/triton-*.dist-info");
  sh("python3 -m zipfile -e " + quote(wheel) + " " + quote(site));
  if (!fs::exists(root + "/opt/drv/libcuda.so.1")) return;  // installed again: the root as it is
  sh("ldconfig -r " + quote(root));                         // the cache names /opt/drv/libcuda.so.1
  sh("mv " + quote(root + "/opt/drv/libcuda.so.1") + " " + quote(root + "/usr/lib/x86_64-linux-gnu/"));
}

// What Triton 3's libcuda_dirs() gives in a chroot to `root`, with `variables` set: its list, or
// "AssertionError " and the assertion's message.
CommandResult triton3_search(const std::string& root, const std::string& variables = "") {
  return in_root(
      root,
      "from triton.backends.nvidia.driver import libcuda_dirs\n"
      "try:\n    print(libcuda_dirs(), end='')\nexcept AssertionError as e:\n    print('AssertionError', e, end='')",
      variables);
}

TEST_F(TritonDriver, LibcudaDirsIsTritonsOwnSearchInItsOwnWords) {
  // Triton 3's search before knobs (3.0 to 3.3): the variable by os.getenv, then the lines of
  // `ldconfig -p` that name libcuda.so.1, LD_LIBRARY_PATH only where none do, and an assertion that
  // one directory holds the file.
  install_triton3(tmp, root, site, "3.3.1",
                  "import functools, os, subprocess\n"
                  "\n"
                  "@functools.lru_cache()\n"
                  "def libcuda_dirs():\n"
                  "    env_libcuda_path = os.getenv(\"TRITON_LIBCUDA_PATH\")\n"
                  "    if env_libcuda_path:\n"
                  "        return [env_libcuda_path]\n",
                  json::object());
  auto triton = [&](const std::string& variables = "") { return triton3_search(root, variables); };
  std::string last_report;
  auto check = [&](const std::string& variables = "") { return triton_findings(root, variables, &last_report); };

  // The loader finds the driver in a default directory; Triton asks the stale cache.
  EXPECT_EQ(in_root(root, "import ctypes; ctypes.CDLL('libcuda.so.1').cuInit(0)").status, 0);
  CommandResult stale = triton();
  ASSERT_EQ(stale.status, 0) << stale.err;
  EXPECT_EQ(stale.out,
            "AssertionError libcuda.so cannot found!\nPossible files are located at ['/opt/drv/libcuda.so.1'].Please "
            "create a symlink of libcuda.so to any of the files.");
  std::vector<json> found = check();
  ASSERT_EQ(found.size(), 1u) << last_report;
  EXPECT_EQ(found[0]["code"], "runtime-library-missing");
  EXPECT_EQ(found[0]["severity"], "error");
  EXPECT_EQ(found[0]["file"], "/opt/venv/lib/python3.11/site-packages/triton/backends/nvidia/driver.py");
  EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), stale.out);
  EXPECT_EQ(found[0]["library"], "libcuda.so.1");
  // The hint, from the kind of place (an `ldconfig` place): the cache's line, where the loader
  // finds the driver, the fix, and the variable that skips the search, each tried below.
  EXPECT_EQ(found[0]["hint"],
            "the first Triton kernel compiled with an empty ~/.triton/cache fails with triton's own error: "
            "libcuda_dirs() asserts that one of the directories of the `ldconfig -p` lines naming libcuda.so.1 "
            "(LD_LIBRARY_PATH's where none does) holds libcuda.so.1, the driver its launcher is built against; none of "
            "the directories of the `ldconfig -p` lines naming libcuda.so.1 holds libcuda.so.1; ld.so.cache names "
            "/opt/drv/libcuda.so.1; the loader finds /lib/x86_64-linux-gnu/libcuda.so.1 (default path): run ldconfig "
            "as root to bring ld.so.cache up to date, or set TRITON_LIBCUDA_PATH=/lib/x86_64-linux-gnu");
  // TRITON_LIBCUDA_PATH skips the search, for Triton and for the model.
  EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=/lib/x86_64-linux-gnu").out, "['/lib/x86_64-linux-gnu']");
  EXPECT_TRUE(check("TRITON_LIBCUDA_PATH=/lib/x86_64-linux-gnu").empty());
  EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=/usr/lib/x86_64-linux-gnu").out, "['/usr/lib/x86_64-linux-gnu']");
  EXPECT_TRUE(check("TRITON_LIBCUDA_PATH=/usr/lib/x86_64-linux-gnu").empty());

  // ldconfig brings the cache up to date: both say it works.
  sh("ldconfig -r " + quote(root));
  EXPECT_EQ(triton().out, "['/lib/x86_64-linux-gnu']");
  EXPECT_TRUE(check().empty());

  // The cache names no libcuda, the driver is found through LD_LIBRARY_PATH: Triton 3 falls back
  // to it, and both say it works.
  sh("mkdir -p " + quote(root + "/opt/other") + " && mv " + quote(root + "/usr/lib/x86_64-linux-gnu/libcuda.so.1") +
     " " + quote(root + "/opt/other/") + " && ldconfig -r " + quote(root));
  EXPECT_EQ(triton("LD_LIBRARY_PATH=/opt/other").out, "['/opt/other']");
  EXPECT_TRUE(check("LD_LIBRARY_PATH=/opt/other").empty());

  // The driver moved to a default directory after the cache was made: no line names it, and
  // LD_LIBRARY_PATH holds none, so the assertion says the other words, for Triton and the model.
  sh("mv " + quote(root + "/opt/other/libcuda.so.1") + " " + quote(root + "/usr/lib/x86_64-linux-gnu/"));
  CommandResult none = triton();
  EXPECT_EQ(none.out,
            "AssertionError libcuda.so cannot found!\nPlease make sure GPU is set up and then run \"/sbin/ldconfig\" "
            "(requires sudo) to refresh the linker cache.");
  found = check();
  ASSERT_EQ(found.size(), 1u) << last_report;
  EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), none.out);
  EXPECT_NE(found[0]["hint"].get<std::string>().find(
                "the loader finds /lib/x86_64-linux-gnu/libcuda.so.1 (default path): run ldconfig as root"),
            std::string::npos)
      << found[0].dump(1);
  sh("ldconfig -r " + quote(root));
  EXPECT_EQ(triton().out, "['/lib/x86_64-linux-gnu']");
  EXPECT_TRUE(check().empty());
}

// Triton 2's libcuda_dirs() (python/triton/common/build.py, installed as triton/common/build.py)
// in the shapes of its releases: the `ldconfig -p` lines that name libcuda.so, with the variable
// read first (`variable`) and LD_LIBRARY_PATH's directories where no line does (`ld_library_path`)
// in the later ones, and an assertion that one directory holds the unversioned libcuda.so, which
// only a driver's development link provides (triton#3053).
std::string triton2_build_py(bool variable, bool ld_library_path) {
  std::string out =
      "import functools, os, subprocess\n"
      "\n"
      "@functools.lru_cache()\n"
      "def libcuda_dirs():\n";
  if (variable)
    out +=
        "    env_libcuda_path = os.getenv(\"TRITON_LIBCUDA_PATH\")\n"
        "    if env_libcuda_path:\n"
        "        return [env_libcuda_path]\n"
        "\n";
  out +=
      "    libs = subprocess.check_output([\"/sbin/ldconfig\", \"-p\"]).decode()\n"
      "    # each line looks like the following:\n"
      "    # libcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1\n"
      "    locs = [line.split()[-1] for line in libs.splitlines() if \"libcuda.so\" in line]\n"
      "    dirs = [os.path.dirname(loc) for loc in locs]\n";
  if (ld_library_path)
    out +=
        "    env_ld_library_path = os.getenv(\"LD_LIBRARY_PATH\")\n"
        "    if env_ld_library_path and not dirs:\n"
        "        dirs = [dir for dir in env_ld_library_path.split(\":\") if os.path.exists(os.path.join(dir, "
        "\"libcuda.so\"))]\n";
  return out +
         "    msg = 'libcuda.so cannot found!\\n'\n"
         "    if locs:\n"
         "        msg += 'Possible files are located at %s.' % str(locs)\n"
         "        msg += 'Please create a symlink of libcuda.so to any of the file.'\n"
         "    else:\n"
         "        msg += 'Please make sure GPU is setup and then run \"/sbin/ldconfig\"'\n"
         "        msg += ' (requires sudo) to refresh the linker cache.'\n"
         "    assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path in dirs), msg\n"
         "    return dirs\n";
}

// triton `version` with `build` as its triton/common/build.py, installed into `site` in place of
// any triton there.
void install_triton2(const TempDir& tmp, const std::string& site, const std::string& version,
                     const std::string& build) {
  fs::create_directories(tmp / "wheels");
  std::string wheel = make_wheel(
      tmp / "wheels",
      {{"name", "triton"},
       {"version", version},
       {"tag", "py3-none-any"},
       {"files", {{"triton/__init__.py", ""}, {"triton/common/__init__.py", ""}, {"triton/common/build.py", build}}}});
  sh("rm -rf " + quote(site + "/triton") + " " + quote(site) + "/triton-*.dist-info");
  sh("python3 -m zipfile -e " + quote(wheel) + " " + quote(site));
}

// What Triton 2's libcuda_dirs() gives in a chroot to `root`, with `variables` set.
CommandResult triton2_search(const std::string& root, const std::string& variables = "") {
  return in_root(root,
                 "from triton.common.build import libcuda_dirs\n"
                 "try:\n    print(libcuda_dirs(), end='')\nexcept AssertionError as e:\n"
                 "    print('AssertionError', e, end='')",
                 variables);
}

const char* kTriton2Listed =
    "AssertionError libcuda.so cannot found!\nPossible files are located at ['/opt/drv/libcuda.so.1'].Please "
    "create a symlink of libcuda.so to any of the file.";
const char* kTriton2None =
    "AssertionError libcuda.so cannot found!\nPlease make sure GPU is setup and then run \"/sbin/ldconfig\" (requires "
    "sudo) to refresh the linker cache.";

// Triton 2.0's shape: the lines of the cache alone. The referee is again the search itself in a
// chroot: with the driver's libcuda.so.1 alone, the loader finds the driver and Triton's assertion
// fails in envdoctor's words; with the link its words ask for, both say it works.
TEST_F(TritonDriver, Triton2AsksForTheUnversionedLink) {
  install_triton2(tmp, site, "2.0.0", triton2_build_py(false, false));
  sh("ldconfig -r " + quote(root));  // the cache names /opt/drv/libcuda.so.1
  auto triton = [&](const std::string& variables = "") { return triton2_search(root, variables); };
  std::string report;
  EXPECT_EQ(in_root(root, "import ctypes; ctypes.CDLL('libcuda.so.1').cuInit(0)").status, 0);
  CommandResult no_link = triton();
  ASSERT_EQ(no_link.status, 0) << no_link.err;
  EXPECT_EQ(no_link.out, kTriton2Listed);
  std::vector<json> found = triton_findings(root, "", &report);
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ(found[0]["code"], "runtime-library-missing");
  EXPECT_EQ(found[0]["file"], "/opt/venv/lib/python3.11/site-packages/triton/common/build.py");
  EXPECT_EQ(found[0]["library"], "libcuda.so");
  EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), no_link.out);
  std::string hint = found[0]["hint"];
  EXPECT_NE(hint.find("create the link /opt/drv/libcuda.so -> libcuda.so.1"), std::string::npos) << hint;
  // This shape reads no TRITON_LIBCUDA_PATH: setting it changes nothing, for Triton and the model.
  EXPECT_EQ(hint.find("TRITON_LIBCUDA_PATH"), std::string::npos) << hint;
  EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=/opt/drv").out, no_link.out);
  EXPECT_EQ(triton_findings(root, "TRITON_LIBCUDA_PATH=/opt/drv", &report).size(), 1u) << report;

  // The link the words ask for: both say it works.
  sh("ln -s libcuda.so.1 " + quote(root + "/opt/drv/libcuda.so"));
  EXPECT_EQ(triton().out, "['/opt/drv']");
  EXPECT_TRUE(triton_findings(root, "", &report).empty()) << report;
}

// The later shapes of Triton 2, each its own rule: the variable read first, and then also
// LD_LIBRARY_PATH's directories where the cache names no libcuda.so. Each is refereed by its own
// search in the chroot, case by case: the cache names the driver without the link; the cache names
// none and the driver is found through LD_LIBRARY_PATH, with and without the link there; the
// variable set.
TEST_F(TritonDriver, Triton2LaterShapesReadTheVariableAndLdLibraryPath) {
  std::string report;
  std::string driver = tmp / "libcuda.so.1";
  fs::copy_file(root + "/opt/drv/libcuda.so.1", driver);
  for (bool ld_library_path : {false, true}) {
    SCOPED_TRACE(ld_library_path ? "variable and LD_LIBRARY_PATH" : "variable");
    install_triton2(tmp, site, ld_library_path ? "2.2.0" : "2.1.0", triton2_build_py(true, ld_library_path));
    // The root as the fixture made it: the driver in /opt/drv, which the cache names.
    sh("R=" + quote(root) + "; rm -rf $R/opt/other $R/etc/ld.so.conf.d/other.conf; cp " + quote(driver) +
       " $R/opt/drv/libcuda.so.1; ldconfig -r $R");
    auto triton = [&](const std::string& variables = "") { return triton2_search(root, variables); };
    auto check = [&](const std::string& variables = "") { return triton_findings(root, variables, &report); };

    // The cache names /opt/drv/libcuda.so.1 and no directory holds the link: the listed words.
    EXPECT_EQ(triton().out, kTriton2Listed);
    std::vector<json> found = check();
    ASSERT_EQ(found.size(), 1u) << report;
    EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), kTriton2Listed);
    std::string hint = found[0]["hint"];
    EXPECT_NE(hint.find("create the link /opt/drv/libcuda.so -> libcuda.so.1"), std::string::npos) << hint;
    EXPECT_NE(hint.find("TRITON_LIBCUDA_PATH=/opt/drv"), std::string::npos) << hint;
    EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=/opt/drv").out, "['/opt/drv']");
    EXPECT_TRUE(check("TRITON_LIBCUDA_PATH=/opt/drv").empty()) << report;

    // The driver moved out of the cache's directories, found by the loader through LD_LIBRARY_PATH:
    // no line names libcuda.so.
    sh("R=" + quote(root) + "; mkdir -p $R/opt/other; mv $R/opt/drv/libcuda.so.1 $R/opt/other/; ldconfig -r $R");
    EXPECT_EQ(triton("LD_LIBRARY_PATH=/opt/other").out, kTriton2None);
    found = check("LD_LIBRARY_PATH=/opt/other");
    ASSERT_EQ(found.size(), 1u) << report;
    EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), kTriton2None);
    // Without LD_LIBRARY_PATH the loader finds no driver: no verdict.
    EXPECT_TRUE(check().empty()) << report;
    // The link beside the driver: only the shape that reads LD_LIBRARY_PATH finds it there.
    sh("ln -s libcuda.so.1 " + quote(root + "/opt/other/libcuda.so"));
    CommandResult linked = triton("LD_LIBRARY_PATH=/opt/other");
    EXPECT_EQ(linked.out, ld_library_path ? "['/opt/other']" : kTriton2None);
    found = check("LD_LIBRARY_PATH=/opt/other");
    EXPECT_EQ(found.size(), ld_library_path ? 0u : 1u) << report;
    if (found.empty()) continue;
    EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), linked.out);
    // ldconfig does not look in LD_LIBRARY_PATH's directories: the hint's fix puts /opt/other in
    // ld.so.conf, and then both say it works.
    hint = found[0]["hint"];
    EXPECT_NE(hint.find("; the loader finds /opt/other/libcuda.so.1 (LD_LIBRARY_PATH): add /opt/other, where "
                        "ldconfig does not look, to a file of /etc/ld.so.conf.d and run ldconfig as root, or set "
                        "TRITON_LIBCUDA_PATH=/opt/other"),
              std::string::npos)
        << hint;
    sh("R=" + quote(root) + "; echo /opt/other > $R/etc/ld.so.conf.d/other.conf; ldconfig -r $R");
    EXPECT_EQ(triton("LD_LIBRARY_PATH=/opt/other").out, "['/opt/other', '/opt/other']");
    EXPECT_TRUE(check("LD_LIBRARY_PATH=/opt/other").empty()) << report;
    EXPECT_TRUE(check().empty()) << report;
  }
}

// Newer Triton reads TRITON_LIBCUDA_PATH through triton/knobs.py (`knobs.nvidia.libcuda_path`,
// an env_opt_str of the variable), not in libcuda_dirs() itself: the variable is honoured where
// the installed knobs.py maps it, and an empty value, false to Python, leaves the search on. The
// referee is again the search itself in a chroot.
TEST_F(TritonDriver, KnobsNameTheVariableInNewerReleases) {
  std::string knobs =
      "import os\n"
      "\n"
      "class env_opt_str:\n"
      "    def __init__(self, key):\n"
      "        self.key = key\n"
      "\n"
      "    def __get__(self, obj, objclass):\n"
      "        return os.getenv(self.key)\n"
      "\n"
      "class nvidia_knobs:\n"
      "    libcuda_path: env_opt_str = env_opt_str(\"TRITON_LIBCUDA_PATH\")\n"
      "\n"
      "nvidia = nvidia_knobs()\n";
  const std::string head =
      "import functools, os, subprocess\n"
      "from triton import knobs\n"
      "\n"
      "@functools.lru_cache()\n"
      "def libcuda_dirs():\n"
      "    if env_libcuda_path := knobs.nvidia.libcuda_path:\n"
      "        return [env_libcuda_path]\n";
  install_triton3(tmp, root, site, "3.5.0", head, {{"triton/knobs.py", knobs}});
  auto triton = [&](const std::string& variables = "") { return triton3_search(root, variables); };
  std::string report;
  CommandResult stale = triton();
  ASSERT_EQ(stale.status, 0) << stale.err;
  ASSERT_EQ(stale.out.rfind("AssertionError ", 0), 0u) << stale.out;
  std::vector<json> found = triton_findings(root, "", &report);
  ASSERT_EQ(found.size(), 1u) << report;
  EXPECT_EQ("AssertionError " + found[0]["message"].get<std::string>(), stale.out);
  EXPECT_NE(found[0]["hint"].get<std::string>().find("TRITON_LIBCUDA_PATH=/lib/x86_64-linux-gnu"), std::string::npos)
      << found[0].dump(1);
  // Set: the knob skips the search, for Triton and for the model.
  EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=/usr/lib/x86_64-linux-gnu").out, "['/usr/lib/x86_64-linux-gnu']");
  EXPECT_TRUE(triton_findings(root, "TRITON_LIBCUDA_PATH=/usr/lib/x86_64-linux-gnu", &report).empty()) << report;
  // Empty: false to Python, so the search runs and fails as before.
  EXPECT_EQ(triton("TRITON_LIBCUDA_PATH=").out, stale.out);
  EXPECT_EQ(triton_findings(root, "TRITON_LIBCUDA_PATH=", &report).size(), 1u) << report;

  // A knobs.py that names no libcuda_path: the driver.py is the same, but what it does is not the
  // rule's (Python raises AttributeError before any search), so no rule matches and there is no verdict.
  std::string other = knobs;
  other.replace(other.find("    libcuda_path: env_opt_str = env_opt_str(\"TRITON_LIBCUDA_PATH\")\n"),
                std::string("    libcuda_path: env_opt_str = env_opt_str(\"TRITON_LIBCUDA_PATH\")\n").size(),
                "    pass\n");
  install_triton3(tmp, root, site, "3.5.0", head, {{"triton/knobs.py", other}});
  CommandResult unknown = in_root(root, "from triton.backends.nvidia.driver import libcuda_dirs; libcuda_dirs()");
  EXPECT_NE(unknown.err.find("AttributeError"), std::string::npos) << unknown.err;
  EXPECT_TRUE(triton_findings(root, "", &report).empty()) << report;
}

}  // namespace
}  // namespace envdoctor::test
