// A Debian root as `FROM debian` and `RUN pip install` leave it: Debian 11's own python3 (the
// root of scripts/debian-root.sh python, copied by hard links), wheels installed by the real pip
// into /usr/local/lib/python3.9/dist-packages, one of them an extension module whose library is
// gone, and a venv beside it at /opt/venv. The referee is Python in a chroot of the root: its
// sys.path, its version, its distributions and its imports. Checked as --root, as the squashfs
// image of the same root (mksquashfs, enroot's format) and as an OCI image (umoci), the environment
// its PATH or Cmd runs checked and the other named with the command that checks it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures/fixture.h"
#include "fixtures/python_fixture.h"
#include "fixtures/referees.h"
#include "fixtures/schema.h"
#include "python/interpreter.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const std::string kDist = "/usr/local/lib/python3.9/dist-packages";
const std::string kBroken = kDist + "/brokenext.cpython-39-x86_64-linux-gnu.so";
const std::string kWords = "libgone.so.1: cannot open shared object file: No such file or directory";

class DebianDistPackages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_.clear();
    if (::geteuid() != 0) skip_ = "needs root, for chroot";
    else if (!have_tool("chroot") || !have_tool("unshare") || !have_tool("gcc")) skip_ = "needs chroot, unshare, gcc";
    std::string base = test_cache_dir() + "/roots/debian-11-python";
    if (skip_.empty() && !fs::exists(base + "/.complete"))
      skip_ = "needs Debian 11's root in " + base + " (scripts/debian-root.sh python, with mmdebstrap)";
    if (!skip_.empty()) return;
    scratch_ = new TempDir;
    root_ = *scratch_ / "root";
    // Hard links: the cached root's files are never written (new files only, Python's bytecode off).
    ASSERT_EQ(run("cp -al " + quote(base) + " " + quote(root_)).status, 0);
    TempDir build;
    build_shared(build / "libgone.so", "int gone(void) { return 1; }", "-nostdlib -Wl,-soname,libgone.so.1", build);
    std::string ext = build / "brokenext.cpython-39-x86_64-linux-gnu.so";
    build_shared(ext, "int gone(void);\nint PyInit_brokenext(void) { return gone(); }\n",
                 "-nostdlib -L" + build.path().string() + " -l:libgone.so", build);
    fs::create_directories(root_ + "/w");
    make_wheel(root_ + "/w", {{"name", "brokenpkg"},
                              {"version", "1.0"},
                              {"tag", "cp39-cp39-linux_x86_64"},
                              {"purelib", false},
                              {"paths", {{"brokenext.cpython-39-x86_64-linux-gnu.so", ext}}}});
    make_wheel(root_ + "/w",
               {{"name", "goodpkg"}, {"version", "2.0"}, {"files", {{"goodpkg/__init__.py", "x = 1\n"}}}});
    CommandResult made = in_root(
        "python3 -m venv /opt/venv && /opt/venv/bin/pip install -q --no-index --no-cache-dir "
        "--disable-pip-version-check --target " +
        kDist + " /w/brokenpkg-1.0-cp39-cp39-linux_x86_64.whl /w/goodpkg-2.0-py3-none-any.whl");
    ASSERT_EQ(made.status, 0) << made.out << made.err;
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(scratch_, nullptr);
  }

  // `command` run by /bin/sh in a chroot of the root, with /proc of its own and none of this
  // machine's environment.
  static CommandResult in_root(const std::string& command) {
    return run("unshare --mount --pid --fork --mount-proc=" + quote(root_ + "/proc") + " chroot " + quote(root_) +
               " /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "
               "PYTHONDONTWRITEBYTECODE=1 /bin/sh -c " +
               quote(command));
  }

  // The distributions a Python of the root finds (importlib.metadata), one name a line.
  static std::vector<std::string> distributions(const std::string& python) {
    CommandResult r = in_root(python +
                              " -c 'import importlib.metadata as m; print(\"\\n\".join(sorted(d.metadata[\"Name\"] "
                              "for d in m.distributions())))'");
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> names;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) names.push_back(line);
    return names;
  }

  static CommandResult check(const std::string& args) {
    return run("env XDG_CACHE_HOME=" + quote(*scratch_ / "cache") + " " + quote(envdoctor()) + " check " + args);
  }

  static json check_json(const std::string& args, int status) {
    CommandResult r = check("--json " + args);
    EXPECT_EQ(r.status, status) << r.err;
    json doc = json::parse(r.out, nullptr, false);
    if (have_jsonschema()) {
      EXPECT_EQ(schema_errors("check", r.out), "");
    }
    return doc.is_discarded() ? json::object() : doc;
  }

  static inline std::string skip_, root_;
  static inline TempDir* scratch_ = nullptr;
};

// The findings of `doc` on `file`, as "code library message" lines.
std::vector<std::string> findings_on(const json& doc, const std::string& file) {
  std::vector<std::string> out;
  for (const json& f : doc["findings"])
    if (f.value("file", "") == file)
      out.push_back(f.value("code", "") + " " + f.value("library", "") + " " + f.value("message", ""));
  return out;
}

// sys.path of the root's python3 read without running it: Debian's site.py patch (dist-packages)
// and the version its binary holds, entry by entry as the chroot's interpreter reports them.
TEST_F(DebianDistPackages, SysPathAndVersionAsTheChrootsPython) {
  CommandResult real = in_root(
      "python3 -c 'import sys, platform; print(platform.python_version()); "
      "print(\"\\n\".join(sys.path[1:]))'");
  ASSERT_EQ(real.status, 0) << real.err;
  std::string error;
  auto read = python::environment_from_prefix("/usr", &error, support::FileRoot(root_));
  ASSERT_TRUE(read) << error;
  std::string mine = read->version_info.full_str() + "\n";
  for (const std::string& entry : read->sys_path) mine += entry + "\n";
  EXPECT_EQ(mine, real.out);
  EXPECT_EQ(read->paths.purelib, kDist);  // where Debian's pip installs
}

// The headline case: the packages pip put in dist-packages are checked (not "0 packages"), and
// the module that cannot load is an error in the words of the chroot's failing import.
TEST_F(DebianDistPackages, TheRootsDistPackagesAreCheckedAsItsImportFails) {
  CommandResult good = in_root("python3 -c 'import goodpkg'");
  EXPECT_EQ(good.status, 0) << good.err;
  CommandResult broken = in_root("python3 -c 'import brokenext'");
  EXPECT_NE(broken.status, 0);
  EXPECT_NE(broken.err.find("ImportError: " + kWords), std::string::npos) << broken.err;

  json doc = check_json("--root " + quote(root_) + " --prefix /usr", 1);
  std::vector<std::string> names = distributions("python3");
  EXPECT_EQ(doc["environment"]["packages"], names.size());
  EXPECT_NE(std::find(names.begin(), names.end(), "brokenpkg"), names.end());
  EXPECT_EQ(doc["environment"]["version"], "3.9.2");
  EXPECT_EQ(findings_on(doc, kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
  EXPECT_EQ(doc["environment"]["other_environments"].size(), 1u);
  EXPECT_EQ(doc["environment"]["other_environments"][0]["prefix"], "/opt/venv");
}

// Two environments in one root: each check names the other, with its version, its packages (as
// many as its own interpreter's importlib.metadata finds) and the command that checks it; the
// command given for the system Python finds the broken module.
TEST_F(DebianDistPackages, EachEnvironmentNamesTheOtherWithItsCommand) {
  json venv = check_json("--root " + quote(root_) + " --prefix /opt/venv", 0);
  std::string usr_command = "envdoctor check --root " + root_ + " --prefix /usr";
  json expected = {{"prefix", "/usr"},   {"python", "/usr/bin/python3"},
                   {"version", "3.9.2"}, {"packages", distributions("python3").size()},
                   {"problem", nullptr}, {"command", usr_command}};
  EXPECT_EQ(venv["environment"]["other_environments"], json::array({expected}));
  EXPECT_TRUE(findings_on(venv, kBroken).empty());

  CommandResult text = check("--root " + quote(root_) + " --prefix /opt/venv");
  EXPECT_NE(text.out.find("\nnot checked: the environment at /usr (Python 3.9.2, " +
                          std::to_string(expected["packages"].get<size_t>()) + " packages): " + usr_command + "\n"),
            std::string::npos)
      << text.out;

  json usr = check_json(usr_command.substr(std::string("envdoctor check ").size()), 1);
  EXPECT_EQ(findings_on(usr, kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
  json other = usr["environment"]["other_environments"][0];
  EXPECT_EQ(other["packages"], distributions("/opt/venv/bin/python").size());
  EXPECT_EQ(other["command"], "envdoctor check --root " + root_ + " --prefix /opt/venv");
}

// --all-environments: the venv the command names, then the system Python it names as not
// checked, each report whole; the worst status (the broken module's error) is the exit status.
TEST_F(DebianDistPackages, AllEnvironmentsChecksEachInTurn) {
  std::string args = "--all-environments --root " + quote(root_) + " --prefix /opt/venv";
  CommandResult text = check(args);
  EXPECT_EQ(text.status, 1) << text.err;
  size_t venv = text.out.find("/opt/venv/bin/python (Python 3.9.2"),
         usr = text.out.find("\n/usr/bin/python3 (Python 3.9.2");
  EXPECT_NE(venv, std::string::npos) << text.out;
  EXPECT_NE(usr, std::string::npos) << text.out;
  EXPECT_LT(venv, usr);
  EXPECT_NE(text.out.find(kBroken, usr), std::string::npos) << text.out;

  CommandResult r = check("--json " + args);
  EXPECT_EQ(r.status, 1) << r.err;
  json docs = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(docs.is_array() && docs.size() == 2) << r.out;
  EXPECT_EQ(docs[0]["environment"]["python"], "/opt/venv/bin/python");
  EXPECT_EQ(docs[1]["environment"]["python"], "/usr/bin/python3");
  EXPECT_EQ(findings_on(docs[1], kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
  if (have_jsonschema()) {
    for (const json& doc : docs) EXPECT_EQ(schema_errors("check", doc.dump()), "");
  }

  // A conda base that is no Python environment (conda-meta, no lib/python3.X) is named as such,
  // and neither stops the others being checked nor empties the report.
  fs::create_directories(root_ + "/opt/conda/conda-meta");
  r = check("--json " + args);
  EXPECT_EQ(r.status, 1) << r.err;
  docs = json::parse(r.out, nullptr, false);
  fs::remove_all(root_ + "/opt/conda");  // the suite's other tests see the root as it was
  ASSERT_TRUE(docs.is_array() && docs.size() == 2) << r.out << r.err;
  EXPECT_EQ(findings_on(docs[1], kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});

  CommandResult alone = check("--all-environments --prefix /usr");
  EXPECT_EQ(alone.status, 2);
  EXPECT_EQ(alone.err,
            "envdoctor: --all-environments checks the environments of a root or image: give --root DIR or --image "
            "REF\n");
}

// The same root as a squashfs image (enroot's format; its environment in /etc/environment): with
// no PATH there, python3 on the default PATH is Debian's, whose dist-packages hold the broken
// module; with the venv first on PATH, the venv is checked and the system Python named, with the
// --image command that finds the error.
TEST_F(DebianDistPackages, ItsSquashfsImageChecksWhatItsPathRuns) {
  if (!have_tool("mksquashfs")) GTEST_SKIP() << "needs mksquashfs (squashfs-tools)";
  auto image = [&](const std::string& name, const std::string& environment) {
    std::string file = root_ + "/etc/environment";
    fs::remove(file);  // a new file, never the cached root's (a hard link)
    std::ofstream(file) << environment;
    std::string sqsh = *scratch_ / name;
    // Uncompressed, and without what no import reads (documentation, apt's caches): 0.3 s, not 30.
    CommandResult r = run("mksquashfs " + quote(root_) + " " + quote(sqsh) +
                          " -noappend -quiet -no-progress -noI -noD -noF -noX -e usr/share var/cache var/lib/apt");
    EXPECT_EQ(r.status, 0) << r.err;
    return sqsh;
  };
  std::string plain = image("plain.sqsh", "");
  json doc = check_json("--image " + quote(plain), 1);
  EXPECT_EQ(doc["environment"]["image"]["prefix"], "/usr");
  EXPECT_EQ(findings_on(doc, kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
  EXPECT_EQ(doc["environment"]["other_environments"][0]["command"],
            "envdoctor check --image " + plain + " --prefix /opt/venv");

  std::string venv = image("venv.sqsh", "PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin\n");
  json first = check_json("--image " + quote(venv), 0);
  EXPECT_EQ(first["environment"]["image"]["prefix"], "/opt/venv");
  EXPECT_TRUE(findings_on(first, kBroken).empty());
  std::string command = "envdoctor check --image " + venv + " --prefix /usr";
  EXPECT_EQ(first["environment"]["other_environments"][0]["command"], command);
  json named = check_json(command.substr(std::string("envdoctor check ").size()), 1);
  EXPECT_EQ(findings_on(named, kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
}

// The same root as an OCI image made by umoci, whose Cmd runs the venv's Python: the venv is
// checked (Cmd decides, as docker run would), the system Python named with the --image command that
// finds the broken module in its dist-packages.
TEST_F(DebianDistPackages, AnOciImageChecksWhatItsCmdRuns) {
  if (!have_tool("umoci")) GTEST_SKIP() << "needs umoci";
  std::string oci = *scratch_ / "oci", layer = *scratch_ / "layer.tar";
  // One layer of the root, without what no import reads (documentation, apt's caches). The root's
  // files are hard links of the cached root, which other tests link at the same time: each new link
  // changes an inode's ctime, and GNU tar then says "file changed as we read it" and exits 1 though
  // what it wrote is whole. That exit, with only those words, is no failure.
  CommandResult tar = run("tar -C " + quote(root_) +
                          " --exclude=./usr/share --exclude=./var/cache --exclude=./var/lib/apt --exclude=./proc "
                          "--warning=no-file-changed -cf " +
                          quote(layer) + " .");
  ASSERT_TRUE(tar.status == 0 || (tar.status == 1 && tar.err.empty())) << tar.status << " " << tar.err;
  CommandResult made =
      run("umoci init --layout " + quote(oci) + " && umoci new --image " + quote(oci + ":app") +
          " && umoci raw add-layer --image " + quote(oci + ":app") + " " + quote(layer) + " && umoci config --image " +
          quote(oci + ":app") + " --config.env PATH=/usr/local/bin:/usr/bin:/bin --config.cmd /opt/venv/bin/python3" +
          " --config.cmd /app/main.py");
  ASSERT_EQ(made.status, 0) << made.err;
  json doc = check_json("--image " + quote(oci + ":app"), 0);
  EXPECT_EQ(doc["environment"]["image"]["interpreter_from"], "Cmd");
  EXPECT_EQ(doc["environment"]["image"]["prefix"], "/opt/venv");
  std::string command = "envdoctor check --image " + oci + ":app --prefix /usr";
  ASSERT_EQ(doc["environment"]["other_environments"].size(), 1u);
  EXPECT_EQ(doc["environment"]["other_environments"][0]["command"], command);
  json named = check_json(command.substr(std::string("envdoctor check ").size()), 1);
  EXPECT_EQ(findings_on(named, kBroken), std::vector<std::string>{"missing-library libgone.so.1 " + kWords});
}

}  // namespace
}  // namespace envdoctor::test
