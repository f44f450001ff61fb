// `envdoctor pip install|uninstall` against real pip: real venvs whose own pip runs (the pip of
// this machine's Python, shared through a .pth file, or an older pip for the version gate), real
// wheelhouses (`--no-index --find-links DIR`). Every refused change is then made with pip alone,
// and the import it breaks must fail with the predicted message; every change let through must
// leave the environment as predicted (a plain check afterwards shows exactly the predicted
// findings).
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>

#include "environment/environment.h"
#include "fixtures/venv.h"
#include "python/metadata_file.h"
#include "python/pip.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// A user at a terminal: `command` runs through sh in a new session whose controlling terminal is
// a pseudo-terminal (forkpty), with stdin, stdout and stderr on it, as at a shell prompt. Each
// step of `dialogue` waits until the screen shows its prompt (after the previous one), then types
// its answer. The screen is what the terminal showed, typed echo included, "\r\n" read as "\n".
struct TerminalSession {
  int status = -1;  // -1: it did not end within five minutes (it was killed)
  std::string screen;
  size_t answered = 0;  // the steps whose prompt appeared
};

TerminalSession on_terminal(const std::string& command,
                            const std::vector<std::pair<std::string, std::string>>& dialogue) {
  TerminalSession session;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return session;
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  size_t searched = 0;
  bool killed = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{master, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    char buf[4096];
    ssize_t got = ::read(master, buf, sizeof buf);
    if (got <= 0) break;  // EIO: every process let go of the terminal
    for (ssize_t i = 0; i < got; i++)
      if (buf[i] != '\r') session.screen += buf[i];
    if (session.answered < dialogue.size()) {
      const auto& [prompt, answer] = dialogue[session.answered];
      if (size_t at = session.screen.find(prompt, searched); at != std::string::npos) {
        searched = at + prompt.size();
        EXPECT_EQ(::write(master, answer.data(), answer.size()), static_cast<ssize_t>(answer.size()));
        session.answered++;
      }
    }
  }
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  ::close(master);
  if (!killed) session.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return session;
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) n++;
  return n;
}

class PipTest : public VenvTest {
 protected:
  void SetUp() override {
    VenvTest::SetUp();
    if (IsSkipped()) return;
    if (shared_pip().empty()) GTEST_SKIP() << "needs a pip wheel (ensurepip's bundle)";
  }

  // onlysrc 1.0 in the wheelhouse as a source distribution only.
  bool add_source_only_project() {
    tmp_.write("src/onlysrc-1.0/setup.py", "from setuptools import setup\nsetup(name='onlysrc', version='1.0')\n");
    tmp_.write("src/onlysrc-1.0/PKG-INFO", "Metadata-Version: 2.1\nName: onlysrc\nVersion: 1.0\n");
    return run("tar -czf " + quote(tmp_ / "wheels/onlysrc-1.0.tar.gz") + " -C " + quote(tmp_ / "src") + " onlysrc-1.0")
               .status == 0;
  }
  // `envdoctor pip --python VENV OPTIONS ACTION ARGS`, the wheelhouse given for installs.
  CommandResult envdoctor_pip(const Venv& venv, const std::string& options, const std::string& action,
                              const std::string& args) {
    std::string index = action == "install" ? " --no-index --find-links " + quote(tmp_ / "wheels") : "";
    return run(quote(envdoctor()) + " pip --python " + quote(venv.python()) + " " + options + " " + action + index +
               " --disable-pip-version-check " + args + " </dev/null");
  }
  // The same with --json: the document, held to pip.schema.json and its prediction to check's.
  json envdoctor_pip_json(const Venv& venv, const std::string& action, const std::string& args, int* status,
                          std::string* err = nullptr) {
    CommandResult r = envdoctor_pip(venv, "--json", action, args);
    *status = r.status;
    if (err) *err = r.err;
    expect_schema_valid("pip", r.out);
    json doc = json::parse(r.out.empty() ? "null" : r.out);
    if (doc.is_object() && doc["prediction"].is_object()) expect_schema_valid("check", doc["prediction"].dump());
    return doc;
  }
  // The findings of a prediction as a later plain check gives them: that check does not know the
  // options of the user's pip command, which the prediction's fix commands keep (the links it was
  // given). `kept` counts the fix commands that had them.
  std::multiset<std::string> plain_without_user_options(json report, int* kept = nullptr) {
    std::string options = " --no-index --find-links " + (tmp_ / "wheels");
    for (json& f : report["findings"])
      if (f.contains("fix_command") && f["fix_command"].is_string()) {
        std::string command = f["fix_command"];
        if (size_t at = command.find(" install" + options); at != std::string::npos) {
          command.erase(at + 8, options.size());
          if (kept) ++*kept;
        }
        f["fix_command"] = command;
      }
    return plain(report);
  }
  bool installed(const Venv& venv, const std::string& name) {
    return run(quote(venv.python()) + " -m pip show -q " + quote(name)).status == 0;
  }

  std::string pure_wheel(const std::string& name, const std::string& version) {
    return make_wheel(tmp_ / "wheels",
                      {{"name", name}, {"version", version}, {"files", {{name + "/__init__.py", "v = 1\n"}}}});
  }
};

// The first incident: `pip uninstall` of one of two owners of libfakecudnn.so.9 that faketorch
// needs. Refused, every file still there, faketorch still imports, the output names it; then pip
// alone makes the change and the import fails with the predicted message.
TEST_F(PipTest, UninstallOfOneOfTwoOwnersIsRefused) {
  std::vector<std::string> wheels = two_owners_wheels();
  auto venv = venv_with_pip();
  venv->install(wheels);
  std::set<std::string> before = files_under(venv->site());

  CommandResult r = envdoctor_pip(*venv, "", "uninstall", "-y fake-cudnn-cu12");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("pip uninstall would remove fake-cudnn-cu12 9.1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("faketorch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libfakecudnn.so.9: cannot open shared object file: No such file or directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Refused: this change would introduce 2 errors; pip was not run and nothing changed."),
            std::string::npos)
      << r.out;
  EXPECT_EQ(files_under(venv->site()), before);
  EXPECT_EQ(venv->import("faketorch._C"), "");

  int status = -1;
  json doc = envdoctor_pip_json(*venv, "uninstall", "-y fake-cudnn-cu12", &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(doc["verdict"], "refused");
  EXPECT_EQ(doc["plan"]["remove"], json::parse(R"([{"name": "fake-cudnn-cu12", "version": "9.1"}])"));
  std::string predicted;
  for (const json& f : new_findings(doc["prediction"]))
    if (f["code"] == "missing-library" && f["package"] == "faketorch") predicted = f["message"];
  ASSERT_NE(predicted, "") << doc.dump(1);

  venv->uninstall("fake-cudnn-cu12");
  EXPECT_EQ(venv->import("faketorch._C"), predicted);
  EXPECT_EQ(plain(venv->check()), plain(doc["prediction"]));
}

// The second incident: the user asks for mamba-ssm; the resolver pulls causal-conv1d, whose
// extension links libcudart.so.12, into an environment whose CUDA runtime is 13. Refused, not
// installed, the missing library named; pip alone then installs it and the import fails so.
TEST_F(PipTest, InstallOfAnExtensionForAMissingCudaRuntimePulledByTheResolverIsRefused) {
  std::string runtime = cuda12_extension_wheels().first;
  make_wheel(tmp_ / "wheels", {{"name", "mamba-ssm"},
                               {"version", "2.2.2"},
                               {"files", {{"mamba_ssm/__init__.py", ""}}},
                               {"requires", {"causal-conv1d>=1.4"}}});
  auto venv = venv_with_pip();
  venv->install({runtime});

  int status = -1;
  json doc = envdoctor_pip_json(*venv, "install", "mamba-ssm", &status);
  EXPECT_EQ(status, 1) << doc.dump(1);
  EXPECT_EQ(doc["verdict"], "refused");
  std::set<std::string> planned;
  for (const json& i : doc["plan"]["install"])
    planned.insert(i["name"].get<std::string>() + " " + i["version"].get<std::string>());
  EXPECT_EQ(planned, (std::set<std::string>{"causal-conv1d 1.5.0", "mamba-ssm 2.2.2"}));
  auto fresh = new_findings(doc["prediction"]);
  ASSERT_EQ(fresh.size(), 1u) << doc.dump(1);
  EXPECT_EQ(fresh[0]["code"], "missing-library");
  EXPECT_EQ(fresh[0]["library"], "libcudart.so.12");
  EXPECT_EQ(fresh[0]["package"], "causal-conv1d");
  EXPECT_FALSE(installed(*venv, "causal-conv1d"));
  EXPECT_FALSE(installed(*venv, "mamba-ssm"));

  // The fix keeps the user's own options (issue 49, 5): what it installs is found where the
  // refused command looked, offline.
  ASSERT_TRUE(fresh[0].contains("fix_command")) << fresh[0].dump(1);
  std::string fix = fresh[0]["fix_command"];
  EXPECT_NE(fix.find(" install --no-index --find-links " + (tmp_ / "wheels") + " "), std::string::npos) << fix;

  CommandResult text = envdoctor_pip(*venv, "", "install", "mamba-ssm");
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("libcudart.so.12: cannot open shared object file"), std::string::npos) << text.out;

  CommandResult real = run(quote(venv->python()) + " -m pip install -q --disable-pip-version-check --no-index -f " +
                           quote(tmp_ / "wheels") + " mamba-ssm");
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(venv->import("causal_conv1d._cc"), fresh[0]["message"].get<std::string>());
}

// `pip install -U corepkg` whose 2.0 drops core_b, which userpkg's extension binds: refused; the
// plan says 2.0 replaces 1.0; pip alone then upgrades and the import fails as predicted.
TEST_F(PipTest, UpgradeThatDropsASymbolIsRefused) {
  auto [core1, core2, user] = dropped_symbol_wheels();  // core2 waits in the wheelhouse, for pip
  auto venv = venv_with_pip();
  venv->install({core1, user});

  int status = -1;
  json doc = envdoctor_pip_json(*venv, "install", "-U corepkg", &status);
  EXPECT_EQ(status, 1) << doc.dump(1);
  ASSERT_EQ(doc["plan"]["install"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["plan"]["install"][0]["version"], "2.0");
  EXPECT_EQ(doc["plan"]["install"][0]["replaces"], "1.0");
  EXPECT_EQ(doc["plan"]["remove"], json::parse(R"([{"name": "corepkg", "version": "1.0"}])"));
  auto fresh = new_findings(doc["prediction"]);
  ASSERT_EQ(fresh.size(), 1u) << doc.dump(1);
  EXPECT_EQ(fresh[0]["code"], "undefined-symbol");
  EXPECT_EQ(fresh[0]["symbol"], "core_b");
  EXPECT_EQ(venv->import("userpkg._u"), "");

  CommandResult real = run(quote(venv->python()) + " -m pip install -q -U --disable-pip-version-check --no-index -f " +
                           quote(tmp_ / "wheels") + " corepkg");
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(venv->import("userpkg._u"), fresh[0]["message"].get<std::string>());
  int kept = 0;
  EXPECT_EQ(plain(venv->check()), plain_without_user_options(doc["prediction"], &kept));
  EXPECT_EQ(kept, 1) << doc["prediction"].dump(1);  // the upgrade's fix installs from the links given
}

// Harmless changes go through: pip runs with the user's arguments, its status comes back, and a
// plain check afterwards shows exactly the predicted findings (install, upgrade, uninstall).
TEST_F(PipTest, HarmlessInstallUpgradeAndUninstallRunPip) {
  pure_wheel("leaf", "1.0");
  pure_wheel("leaf", "2.0");
  auto venv = venv_with_pip();

  int status = -1;
  std::string err;
  json doc = envdoctor_pip_json(*venv, "install", "leaf==1.0", &status, &err);
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(doc["verdict"], "safe");
  EXPECT_NE(err.find("Successfully installed leaf-1.0"), std::string::npos) << err;  // pip's own output
  EXPECT_EQ(plain(venv->check()), plain(doc["prediction"]));
  EXPECT_EQ(doc["prediction"]["environment"]["packages"], venv->check()["environment"]["packages"]);

  doc = envdoctor_pip_json(*venv, "install", "-U leaf", &status, &err);
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(doc["plan"]["install"][0]["replaces"], "1.0");
  EXPECT_EQ(run(quote(venv->python()) + " -m pip show leaf | grep ^Version").out, "Version: 2.0\n");
  EXPECT_EQ(plain(venv->check()), plain(doc["prediction"]));

  CommandResult r = envdoctor_pip(*venv, "", "uninstall", "-y leaf");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("pip uninstall would remove leaf 2.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Successfully uninstalled leaf-2.0"), std::string::npos) << r.out;
  EXPECT_FALSE(installed(*venv, "leaf"));

  // pip's own status comes back: a requirement pip cannot resolve is pip's error, with its status.
  CommandResult missing = envdoctor_pip(*venv, "", "install", "nosuchproject");
  CommandResult referee = run(quote(venv->python()) + " -m pip install --dry-run --no-index -f " +
                              quote(tmp_ / "wheels") + " --disable-pip-version-check nosuchproject");
  EXPECT_NE(referee.status, 0);
  EXPECT_EQ(missing.status, referee.status) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("ERROR: No matching distribution found for nosuchproject"), std::string::npos)
      << missing.out;
}

// `-r requirements.txt` naming two packages, spelled as pip allows (case, separators, comments):
// uninstall of both is refused when one is needed; install of two harmless ones goes through.
TEST_F(PipTest, RequirementsFileWithTwoPackages) {
  std::vector<std::string> wheels = two_owners_wheels();
  pure_wheel("leaf", "1.0");
  pure_wheel("other-leaf", "1.0");
  auto venv = venv_with_pip();
  venv->install(wheels);

  std::string uninstall = tmp_.write("uninstall.txt", "# the old CUDA\nFake_CuDNN.cu12  # twin of cu13\nnot-here\n");
  int status = -1;
  std::string err;
  json doc = envdoctor_pip_json(*venv, "uninstall", "-y -r " + quote(uninstall), &status, &err);
  EXPECT_EQ(status, 1) << doc.dump(1);
  EXPECT_EQ(doc["plan"]["remove"], json::parse(R"([{"name": "fake-cudnn-cu12", "version": "9.1"}])"));
  EXPECT_EQ(doc["plan"]["not_installed"], json::parse(R"(["not-here"])"));
  // Said as pip says it: the referee is pip's own uninstall of that name.
  CommandResult pip_says = run(quote(venv->python()) + " -m pip uninstall -y not-here");
  EXPECT_NE(pip_says.err.find("WARNING: Skipping not-here as it is not installed."), std::string::npos) << pip_says.err;
  EXPECT_NE(err.find(python::not_installed_warning("not-here")), std::string::npos) << err;
  EXPECT_TRUE(installed(*venv, "fake-cudnn-cu12"));

  std::string install = tmp_.write("install.txt", "leaf==1.0\nOther_Leaf\n");
  doc = envdoctor_pip_json(*venv, "install", "-r " + quote(install), &status, &err);
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(doc["plan"]["install"].size(), 2u) << doc.dump(1);
  EXPECT_TRUE(installed(*venv, "leaf"));
  EXPECT_TRUE(installed(*venv, "other-leaf"));
  EXPECT_EQ(plain(venv->check()), plain_without_user_options(doc["prediction"]));
}

// A requirement available only as a source distribution: cannot be checked (envdoctor runs no
// build), said in pip's words, nothing installed, pip's status.
TEST_F(PipTest, SdistOnlyRequirementCannotBeChecked) {
  ASSERT_TRUE(add_source_only_project());
  auto venv = venv_with_pip();

  CommandResult r = envdoctor_pip(*venv, "", "install", "onlysrc");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ERROR: Could not find a version that satisfies the requirement onlysrc"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Cannot check this change, so nothing was installed."), std::string::npos) << r.out;
  EXPECT_FALSE(installed(*venv, "onlysrc"));
  // Unchecked means not installed unless --force: even at a terminal nothing is asked.
  TerminalSession t = on_terminal("NO_COLOR=1 " + quote(envdoctor()) + " pip --python " + quote(venv->python()) +
                                      " install --no-index --find-links " + quote(tmp_ / "wheels") + " onlysrc",
                                  {});
  EXPECT_EQ(t.status, 1) << t.screen;
  EXPECT_EQ(t.screen.find("Proceed anyway?"), std::string::npos) << t.screen;
  EXPECT_FALSE(installed(*venv, "onlysrc"));
  int status = -1;
  json doc = envdoctor_pip_json(*venv, "install", "onlysrc", &status);
  EXPECT_EQ(doc["verdict"], "cannot-check");
  EXPECT_TRUE(doc["prediction"].is_null());
}

// A requirement no index or link offers in any form: pip's own reason ("from versions: none") is
// the answer, not source distributions, and no --force is offered, since pip itself (the referee)
// fails the same way. A project with only a source distribution still gets the --force line.
TEST_F(PipTest, RequirementNoIndexOffersIsPipsOwnReason) {
  auto venv = venv_with_pip();
  CommandResult r = envdoctor_pip(*venv, "", "install", "nosuchpkg");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(
      r.out.find("ERROR: Could not find a version that satisfies the requirement nosuchpkg (from versions: none)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nosuchpkg is offered in no form, wheel or source, by the indexes and links pip was given"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("source distribution"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--force"), std::string::npos) << r.out;
  int status = -1;
  json doc = envdoctor_pip_json(*venv, "install", "nosuchpkg", &status);
  EXPECT_EQ(doc["verdict"], "cannot-check");
  EXPECT_EQ(doc["not_found"], json::array({"nosuchpkg"}));
  // The referee: pip itself, unchecked, cannot install it either.
  CommandResult pip = run(quote(venv->python()) + " -m pip install --no-index --find-links " + quote(tmp_ / "wheels") +
                          " --disable-pip-version-check nosuchpkg");
  EXPECT_NE(pip.status, 0) << pip.out << pip.err;
  EXPECT_NE(pip.err.find("No matching distribution found for nosuchpkg"), std::string::npos) << pip.err;

  ASSERT_TRUE(add_source_only_project());
  CommandResult sdist = envdoctor_pip(*venv, "", "install", "onlysrc");
  EXPECT_NE(sdist.out.find("from wheels alone"), std::string::npos) << sdist.out;
  EXPECT_NE(sdist.out.find("To install it unchecked:"), std::string::npos) << sdist.out;
  EXPECT_FALSE(envdoctor_pip_json(*venv, "install", "onlysrc", &status).contains("not_found"));
}

// --force on a refused change: the prediction is printed, then pip runs, and what it breaks
// breaks as predicted.
// A package `envdoctor pip install --no-index --find-links DIR` installed, with a file gone: the fix
// reinstalls it from DIR, as it was found (issue 26, 7a), and pasted into a bare shell it repairs
// the environment offline. A package pip alone installed keeps the index's fix: nothing recorded
// where it came from.
TEST_F(PipTest, FixReinstallsOfflineFromTheLinksEnvdoctorPipWasGiven) {
  ::setenv("XDG_STATE_HOME", (tmp_ / "state").c_str(), 1);  // this test's own records
  std::string lib = tmp_ / "build/libprov.so.1";
  build_shared(lib, "int prov(void) { return 1; }", "-Wl,-soname,libprov.so.1", tmp_);
  platlib_wheel("provlib", "2.0", {{"provlib/libprov.so.1", lib}}, {{"provlib/__init__.py", ""}});
  platlib_wheel("otherlib", "1.0", {{"otherlib/libother.so.1", lib}}, {{"otherlib/__init__.py", ""}});
  auto venv = venv_with_pip();
  CommandResult r = envdoctor_pip(*venv, "", "install", "provlib==2.0");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  CommandResult plain = run(quote(venv->python()) + " -m pip install -q --disable-pip-version-check --no-index -f " +
                            quote(tmp_ / "wheels") + " otherlib==1.0");
  ASSERT_EQ(plain.status, 0) << plain.err;
  fs::remove(venv->site() + "/provlib/libprov.so.1");
  fs::remove(venv->site() + "/otherlib/libother.so.1");

  json report = venv->check();
  std::string provlib_fix, otherlib_fix;
  for (const json& f : report["findings"])
    if (f["code"] == "record-missing-file") (f["package"] == "provlib" ? provlib_fix : otherlib_fix) = f["fix_command"];
  EXPECT_EQ(provlib_fix, venv->python() + " -m pip install --force-reinstall --no-deps --no-index --find-links " +
                             (tmp_ / "wheels") + " provlib==2.0")
      << report.dump(1);
  EXPECT_EQ(otherlib_fix, venv->python() + " -m pip install --force-reinstall --no-deps otherlib==1.0")
      << report.dump(1);

  CommandResult fixed = run("cd / && env -i /bin/bash -c " + quote(provlib_fix));
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_TRUE(fs::exists(venv->site() + "/provlib/libprov.so.1"));
  EXPECT_EQ(venv->import("provlib"), "");
  // The reinstall wrote a new .dist-info: the record no longer applies to it, and nothing is wrong.
  report = venv->check();
  for (const json& f : report["findings"]) EXPECT_NE(f["package"], "provlib") << f.dump(1);

  // A damaged record file is read as no record: the index's fix, and no failure.
  for (const auto& e : fs::directory_iterator(tmp_ / "state/envdoctor/index-origins-v1"))
    std::ofstream(e.path()) << "{\"site_dir\": 5, \"distributions\": [1]}";
  r = envdoctor_pip(*venv, "", "install", "--force-reinstall provlib==2.0");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const auto& e : fs::directory_iterator(tmp_ / "state/envdoctor/index-origins-v1"))
    std::ofstream(e.path()) << "{\"site_dir\": \"" + venv->site() + "\", \"distributions\": {\"x\": 3}}";
  fs::remove(venv->site() + "/provlib/libprov.so.1");
  int status = -1;
  report = venv->check(&status);
  EXPECT_EQ(status, 1);
  for (const json& f : report["findings"])
    if (f["code"] == "record-missing-file" && f["package"] == "provlib")
      EXPECT_EQ(f["fix_command"], venv->python() + " -m pip install --force-reinstall --no-deps provlib==2.0");
}

TEST_F(PipTest, ForceRunsPipOnARefusedChange) {
  std::vector<std::string> wheels = two_owners_wheels();
  auto venv = venv_with_pip();
  venv->install(wheels);
  CommandResult r = envdoctor_pip(*venv, "--force", "uninstall", "-y fake-cudnn-cu12");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Successfully uninstalled fake-cudnn-cu12-9.1"), std::string::npos) << r.out;
  EXPECT_FALSE(installed(*venv, "fake-cudnn-cu12"));
  EXPECT_EQ(venv->import("faketorch._C"),
            "libfakecudnn.so.9: cannot open shared object file: No such file or directory");
}

// A refusal at a terminal asks `Proceed anyway? [y/N]`, no by default: Enter, `n` or end of input
// leave pip unrun and everything in place (status 1); `y` runs pip, whose status comes back (here
// pip's own prompt, answered `n`, makes pip keep the package). Where stdin is not the terminal
// (a pipe, /dev/null, a script), nothing is asked and the refusal stands.
TEST_F(PipTest, RefusalAtATerminalAsksAndDefaultsToNo) {
  std::vector<std::string> wheels = two_owners_wheels();
  auto venv = venv_with_pip();
  venv->install(wheels);
  std::set<std::string> before = files_under(venv->site());
  const std::string prompt = "Proceed anyway? [y/N] ";
  std::string command = "NO_COLOR=1 " + quote(envdoctor()) + " pip --python " + quote(venv->python()) +
                        " uninstall --disable-pip-version-check -y fake-cudnn-cu12";

  for (const std::string& answer : {std::string("\n"), std::string("n\n"), std::string("N\n"), std::string("\x04")}) {
    TerminalSession t = on_terminal(command, {{prompt, answer}});
    EXPECT_EQ(t.status, 1) << t.screen;
    EXPECT_EQ(t.answered, 1u) << t.screen;
    EXPECT_EQ(occurrences(t.screen, prompt), 1u) << t.screen;
    EXPECT_NE(t.screen.find("Refused: this change would introduce 2 errors; pip was not run and nothing changed."),
              std::string::npos)
        << t.screen;
    EXPECT_EQ(t.screen.find("Successfully uninstalled"), std::string::npos) << t.screen;
    EXPECT_EQ(files_under(venv->site()), before) << "answer " << quote(answer);
  }

  // Not a terminal on stdin, though stdout and stderr are: no question, status 1.
  TerminalSession piped = on_terminal(command + " </dev/null", {});
  EXPECT_EQ(piped.status, 1) << piped.screen;
  EXPECT_EQ(piped.screen.find("Proceed anyway?"), std::string::npos) << piped.screen;
  EXPECT_NE(piped.screen.find("Refused:"), std::string::npos) << piped.screen;
  EXPECT_EQ(files_under(venv->site()), before);

  // `y`, then pip's own question (no -y this time), which is pip's to ask and the user's to answer.
  std::string asks_pip = "NO_COLOR=1 " + quote(envdoctor()) + " pip --python " + quote(venv->python()) +
                         " uninstall --disable-pip-version-check fake-cudnn-cu12";
  TerminalSession kept = on_terminal(asks_pip, {{prompt, "y\n"}, {"Proceed (Y/n)? ", "n\n"}});
  EXPECT_EQ(kept.answered, 2u) << kept.screen;
  CommandResult referee =
      run("printf 'n\\n' | " + quote(venv->python()) + " -m pip uninstall --disable-pip-version-check fake-cudnn-cu12");
  EXPECT_EQ(kept.status, referee.status) << kept.screen << referee.out << referee.err;
  EXPECT_EQ(files_under(venv->site()), before);

  TerminalSession yes = on_terminal(command, {{prompt, "y\n"}});
  EXPECT_EQ(yes.status, 0) << yes.screen;
  EXPECT_NE(yes.screen.find("Successfully uninstalled fake-cudnn-cu12-9.1"), std::string::npos) << yes.screen;
  EXPECT_FALSE(installed(*venv, "fake-cudnn-cu12"));
  EXPECT_EQ(venv->import("faketorch._C"),
            "libfakecudnn.so.9: cannot open shared object file: No such file or directory");
}

// uv's environments: where a distribution's INSTALLER says uv and an executable `uv` is on PATH,
// envdoctor pip says that a plain `uv pip` command goes unchecked and how to check it instead.
// Nothing is said without uv on PATH (or with a `uv` that is not executable, which no shell
// would run), nor when every INSTALLER says pip. uv is not installed here: a script stands in
// for it, since only its presence on PATH is asked (envdoctor pip never runs it).
TEST_F(PipTest, UvInstalledEnvironmentWithUvOnPathGetsANote) {
  pure_wheel("leaf", "1.0");
  auto venv = venv_with_pip();
  venv->install({tmp_ / "wheels/leaf-1.0-py3-none-any.whl"});
  std::string fake_uv = tmp_.write("uvbin/uv", "#!/bin/sh\necho 'uv 0.0.0 (a stand-in)'\n");
  tmp_.write("not-executable/uv", "#!/bin/sh\n");
  fs::permissions(fake_uv, fs::perms::owner_exec, fs::perm_options::add);
  ASSERT_EQ(run(quote(fake_uv)).status, 0);
  std::string path = run("printf %s \"$PATH\"").out;
  bool uv_on_machine = run("command -v uv").status == 0;

  const std::string note =
      "note: uv installed packages of this environment (their INSTALLER says uv), and uv is on PATH: a `uv pip` "
      "command is checked only when given as `envdoctor uv pip install|uninstall --python " +
      venv->python() + " ...`\n";
  auto envdoctor_with_path = [&](const std::string& dirs, const Venv& v) {
    return run("PATH=" + quote(dirs) + " " + quote(envdoctor()) + " pip --python " + quote(v.python()) +
               " uninstall -y --disable-pip-version-check not-installed-anywhere");
  };
  std::string installer = venv->site() + "/leaf-1.0.dist-info/INSTALLER";
  ASSERT_EQ(run("cat " + quote(installer)).out, "pip\n");
  CommandResult by_pip = envdoctor_with_path(tmp_ / "uvbin" + ":" + path, *venv);
  EXPECT_EQ(by_pip.status, 0) << by_pip.err;
  EXPECT_EQ(by_pip.err.find("note: uv"), std::string::npos) << by_pip.err;

  std::ofstream(installer) << "uv\n";
  CommandResult with_uv = envdoctor_with_path(tmp_ / "uvbin" + ":" + path, *venv);
  EXPECT_EQ(with_uv.status, 0) << with_uv.err;
  EXPECT_EQ(with_uv.err.rfind(note, 0), 0u) << with_uv.err;
  EXPECT_EQ(occurrences(with_uv.err, "note: uv"), 1u) << with_uv.err;
  if (!uv_on_machine) {
    CommandResult without_uv = envdoctor_with_path(tmp_ / "not-executable" + ":" + path, *venv);
    EXPECT_EQ(without_uv.status, 0) << without_uv.err;
    EXPECT_EQ(without_uv.err.find("note: uv"), std::string::npos) << without_uv.err;
  }

  // As `uv venv` makes it: no pip. The note says envdoctor pip has none to run, and envdoctor pip
  // says so and changes nothing (status 2), as for an install.
  Venv bare(tmp_, "bare");
  std::string bare_site = bare.site();
  ASSERT_EQ(run("cp -r " + quote(venv->site() + "/leaf") + " " + quote(venv->site() + "/leaf-1.0.dist-info") + " " +
                quote(bare_site))
                .status,
            0);
  CommandResult no_pip = envdoctor_with_path(tmp_ / "uvbin" + ":" + path, bare);
  EXPECT_EQ(no_pip.status, 2) << no_pip.err;
  EXPECT_NE(no_pip.err.find("; this environment has no pip, which envdoctor pip runs\n"), std::string::npos)
      << no_pip.err;
  EXPECT_NE(no_pip.err.find(bare.python() + " has no pip (No module named pip)"), std::string::npos) << no_pip.err;
  EXPECT_NE(run(quote(bare.python()) + " -m pip --version").err.find("No module named pip"), std::string::npos);
  EXPECT_TRUE(fs::exists(bare_site + "/leaf/__init__.py"));
}

// What is installed, as envdoctor pip takes it (the environment's own inventory, which the
// simulation changes) and as `pip inspect` says (the referee): the same distributions, by
// normalized name, at the same versions, for every one of them. The environments: venvs with
// --system-site-packages over this machine's interpreters (Debian's /usr/bin/python3 carries its
// python3-* packages), pip reached through a .pth file, and wheels installed by pip.
TEST_F(PipTest, InventoryAgreesWithPipInspect) {
  std::vector<std::string> wheels = two_owners_wheels();
  wheels.push_back(pure_wheel("Leaf_Pkg", "1.0.post1"));
  size_t compared = 0;
  for (const std::string base : {"python3", "/usr/bin/python3"}) {
    if (run("command -v " + quote(base)).status != 0) continue;
    Venv venv(tmp_, "inspect-" + std::to_string(compared), base, "--system-site-packages");
    give_pip(venv, shared_pip());
    venv.install(wheels);
    CommandResult inspect = run(quote(venv.python()) + " -m pip inspect --disable-pip-version-check");
    ASSERT_EQ(inspect.status, 0) << inspect.err;
    json report = json::parse(inspect.out);
    std::map<std::string, std::string> pip_says;
    for (const json& d : report["installed"])
      pip_says[python::normalize_name(d["metadata"]["name"].get<std::string>())] = d["metadata"]["version"];

    std::string error;
    environment::EnvironmentOptions options;
    options.python = venv.python();
    std::unique_ptr<environment::Environment> env = environment::build_environment(options, &error);
    ASSERT_TRUE(env) << error;
    std::map<std::string, std::string> envdoctor_says;
    for (const python::Distribution& d : env->inventory.distributions)
      envdoctor_says.emplace(d.key(), env->inventory.find(d.name)->version);  // the one a plan replaces
    EXPECT_EQ(envdoctor_says, pip_says) << base;
    EXPECT_EQ(envdoctor_says["leaf-pkg"], "1.0.post1");
    EXPECT_EQ(envdoctor_says["fake-cudnn-cu12"], "9.1");
    EXPECT_GT(pip_says.size(), 5u);
    compared++;
  }
  EXPECT_GT(compared, 0u);
}

// A pip before 22.2 has no `install --report`: a clear error, status 2, nothing installed. The
// old pip is a real one, from an interpreter's ensurepip bundle.
TEST_F(PipTest, PipTooOldForReportIsAClearError) {
  std::string wheel = bundled_pip_wheel(false);
  if (wheel.empty()) GTEST_SKIP() << "no pip wheel older than 22.2 on this machine";
  std::string dir = pip_dir(wheel, "old-pip");
  ASSERT_NE(dir, "");
  pure_wheel("leaf", "1.0");
  Venv venv(tmp_, "old");
  give_pip(venv, dir);
  CommandResult version = run(quote(venv.python()) + " -m pip --version");
  if (version.status != 0) GTEST_SKIP() << wheel << " does not run on this Python: " << version.err;
  ASSERT_EQ(version.out.rfind("pip 2", 0), 0u) << version.out;

  CommandResult r = envdoctor_pip(venv, "", "install", "leaf");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("is too old: envdoctor pip needs `pip install --dry-run --report` (pip 22.2 and later); "
                       "nothing was changed."),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(installed(venv, "leaf"));
  // The referee: that pip itself cannot make the dry run (--dry-run came with --report, in 22.2).
  CommandResult pip_says = run(quote(venv.python()) + " -m pip install --dry-run --report - --no-index -f " +
                               quote(tmp_ / "wheels") + " leaf");
  EXPECT_NE(pip_says.status, 0);
  EXPECT_NE(pip_says.err.find("no such option: --dry-run"), std::string::npos) << pip_says.err;
}

// A local HTTP server for a wheelhouse, stopped (by its pid) when the test ends.
class WheelServer {
 public:
  explicit WheelServer(const std::string& dir) {
    CommandResult r = run("cd " + quote(dir) + " && (python3 -u -m http.server --bind 127.0.0.1 0 >" +
                          quote(dir + "/.server.log") + " 2>&1 & echo $!)");
    pid_ = std::atoi(r.out.c_str());
    for (int i = 0; i < 100 && port_.empty(); i++) {
      std::string log = run("cat " + quote(dir + "/.server.log")).out;
      if (size_t at = log.find(" port "); at != std::string::npos)
        port_ = log.substr(at + 6, log.find(' ', at + 6) - at - 6);
      else run("sleep 0.1");
    }
  }
  ~WheelServer() {
    if (pid_ > 0) run("kill " + std::to_string(pid_));
  }
  std::string url() const { return port_.empty() ? "" : "http://127.0.0.1:" + port_ + "/"; }

 private:
  int pid_ = -1;
  std::string port_;
};

// A wheel that is not on this disk: pip downloads it into envdoctor's private directory, its
// sha256 is held to the report, the change is checked, pip installs it, the directory is gone.
TEST_F(PipTest, WheelFromAnIndexIsDownloadedByPipAndVerified) {
  pure_wheel("leaf", "1.0");
  WheelServer server(tmp_ / "wheels");
  if (server.url().empty()) GTEST_SKIP() << "could not start python3 -m http.server";
  auto venv = venv_with_pip();
  CommandResult r = run(quote(envdoctor()) + " pip --json --python " + quote(venv->python()) +
                        " install --disable-pip-version-check --no-index --find-links " + server.url() + " leaf");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  expect_schema_valid("pip", r.out);
  json doc = json::parse(r.out.empty() ? "{}" : r.out);
  ASSERT_EQ(doc["plan"]["install"].size(), 1u) << r.out << r.err;
  EXPECT_EQ(doc["plan"]["install"][0]["url"], server.url() + "leaf-1.0-py3-none-any.whl");
  std::string downloaded = doc["plan"]["install"][0]["wheel"];
  EXPECT_NE(downloaded.find("envdoctor-pip-"), std::string::npos) << downloaded;
  EXPECT_FALSE(fs::exists(fs::path(downloaded).parent_path().parent_path())) << "the download directory is left";
  EXPECT_TRUE(installed(*venv, "leaf"));
}

// The report reader: version "1" only (pip 22.2's experimental "0" refused), its fields.
TEST(PipReport, ReadsVersionOneOnly) {
  std::string error;
  auto items =
      python::parse_install_report(R"({"version": "1", "install": [{"metadata": {"name": "Foo", "version": "1.0"},
      "download_info": {"url": "file:///w/foo%201.0-py3-none-any.whl", "archive_info": {"hashes": {"sha256": "ab"}}}}]})",
                                   &error);
  ASSERT_TRUE(items) << error;
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].name, "Foo");
  EXPECT_EQ((*items)[0].sha256, "ab");
  EXPECT_EQ(python::file_url_path((*items)[0].url), "/w/foo 1.0-py3-none-any.whl");
  EXPECT_FALSE(python::file_url_path("https://example.org/foo.whl"));
  EXPECT_FALSE(python::parse_install_report(R"({"version": "0", "install": []})", &error));
  EXPECT_NE(error.find("version \"0\""), std::string::npos) << error;
  EXPECT_FALSE(python::parse_install_report("not json", &error));
  EXPECT_FALSE(python::parse_install_report(R"({"version": "1", "install": [{"metadata": 3}]})", &error));
}

TEST(PipArguments, UninstallNamesAsPipReadsThem) {
  TempDir tmp;
  tmp.write("nested/more.txt", "third\\\n  # continued comment\n");
  std::string file =
      tmp.write("r.txt", "# comment\nFirst_Pkg[extra]>=1.0 ; python_version > '3'\n-r nested/more.txt\n\n-e .\n");
  std::string error;
  auto names =
      python::uninstall_names({"-y", "--root-user-action", "ignore", "zeroth", "-r", file, "first.pkg"}, &error);
  ASSERT_TRUE(names) << error;
  EXPECT_EQ(*names, (std::vector<std::string>{"zeroth", "First_Pkg", "third"}));
  EXPECT_FALSE(python::uninstall_names({"-r", tmp / "absent.txt"}, &error));
  EXPECT_EQ(error,
            "Could not open requirements file: [Errno 2] No such file or directory: '" + (tmp / "absent.txt") + "'");
}

TEST(PipArguments, TheActionIsInstallOrUninstallAsPipSpellsIt) {
  EXPECT_EQ(std::string(python::pip_action_name(python::PipAction::kInstall)), "install");
  EXPECT_EQ(std::string(python::pip_action_name(python::PipAction::kUninstall)), "uninstall");
  EXPECT_EQ(python::parse_pip_action("install"), python::PipAction::kInstall);
  EXPECT_EQ(python::parse_pip_action("uninstall"), python::PipAction::kUninstall);
  for (const char* word : {"Install", "download", "install ", ""}) EXPECT_FALSE(python::parse_pip_action(word)) << word;
  // Any other word is refused before an environment is opened or an installer asked.
  CommandResult pip = run(quote(envdoctor()) + " pip download x");
  EXPECT_EQ(pip.status, 2);
  EXPECT_EQ(pip.err, "envdoctor: pip: expected install or uninstall, not 'download'\n");
  CommandResult uv = run(quote(envdoctor()) + " uv pip list");
  EXPECT_EQ(uv.status, 2);
  EXPECT_EQ(uv.err, "envdoctor: uv pip: expected install or uninstall, not 'list'\n");
}

TEST(PipArguments, IndexOptionsAndUnmodelledOptions) {
  EXPECT_EQ(python::index_options({"--no-index", "-f", "/w", "-U", "x", "--index-url=https://i", "-ihttps://j"}),
            (std::vector<std::string>{"--no-index", "-f", "/w", "--index-url=https://i", "-ihttps://j"}));
  EXPECT_EQ(python::unmodelled_option({"-U", "--target=/t", "x"}), "--target");
  EXPECT_EQ(python::unmodelled_option({"--user", "x"}), "--user");
  EXPECT_EQ(python::unmodelled_option({"-U", "x"}), "");
}

}  // namespace
}  // namespace envdoctor::test
