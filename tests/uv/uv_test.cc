// `envdoctor uv pip install|uninstall` against uv: environments made by `uv venv` (no pip in them),
// packages installed by uv (INSTALLER says uv), real wheelhouses (`--no-index --find-links DIR`).
// Every refused change is then made with uv alone and the import it breaks must fail with the
// predicted message; every change let through must leave the environment as predicted.
//
// No registry this machine reaches serves uv, so where no real `uv` is on PATH, tests/uv/fake-uv
// stands in for it: it takes uv's documented arguments, finds the environment as uv documents it,
// prints uv's documented dry-run lines and does the work with real pip underneath, so the files
// that appear and vanish are real and the import afterwards is the referee (docs/pip.md). Where a
// real uv is on PATH, the same tests run against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "python/laid_out.h"
#include "python/uv.h"
#include "python/wheel.h"
#include "support/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// Every file below `dir` with its sha256, bytecode caches left out: equal before and after means
// no file moved, appeared or changed.
std::string file_hashes(const std::string& dir) {
  return run("cd " + quote(dir) + " && find . -type f ! -path '*__pycache__*' -print0 | sort -z | xargs -0 sha256sum")
      .out;
}

// The environment variables uv's discovery reads, cleared: each test says which it sets.
const std::string kCleanEnv = "env -u VIRTUAL_ENV -u CONDA_PREFIX -u UV_PYTHON -u UV_SYSTEM_PYTHON ";

class UvTest : public VenvTest {
 protected:
  void SetUp() override {
    VenvTest::SetUp();
    if (IsSkipped()) return;
    std::string path = run("printf %s \"$PATH\"").out;
    CommandResult real = run("uv --version");
    real_uv_ = real.status == 0 && real.out.find("stand-in") == std::string::npos;
    if (real_uv_) {
      path_ = path;
    } else {
      // The stand-in works through `pip --python ENV` (pip 22.3 and later).
      CommandResult pip = run("python3 -m pip --python \"$(command -v python3)\" --version");
      if (pip.status != 0) GTEST_SKIP() << "the uv stand-in needs pip 22.3 or later (pip --python): " << pip.err;
      fs::create_directories(tmp_ / "uvbin");
      fs::create_symlink(ENVDOCTOR_SOURCE_DIR "/tests/uv/fake-uv", tmp_ / "uvbin/uv");
      path_ = tmp_ / "uvbin" + ":" + path;
    }
  }

  // A command run as the user would type it in `dir`, with uv on PATH and `variables` set.
  CommandResult in_shell(const std::string& command, const std::string& dir, const std::string& variables = "") {
    return run("cd " + quote(dir) + " && " + kCleanEnv + "PATH=" + quote(path_) +
               " FAKE_UV_LOG=" + quote(tmp_ / "uv.log") + " " + variables + " " + command + " </dev/null");
  }
  CommandResult uv(const std::string& args, const std::string& dir, const std::string& variables = "") {
    return in_shell("uv " + args, dir, variables);
  }
  // `envdoctor uv pip OPTIONS ACTION ARGS` in `dir`.
  CommandResult envdoctor_uv(const std::string& options, const std::string& action, const std::string& args,
                             const std::string& dir, const std::string& variables = "") {
    return in_shell(quote(envdoctor()) + " uv pip " + options + " " + action + " " + args, dir, variables);
  }
  // The same with --json: the document, held to pip.schema.json and its prediction to check's.
  json envdoctor_uv_json(const std::string& action, const std::string& args, const std::string& dir, int* status,
                         std::string* err = nullptr, const std::string& variables = "") {
    CommandResult r = envdoctor_uv("--json", action, args, dir, variables);
    *status = r.status;
    if (err) *err = r.err;
    expect_schema_valid("pip", r.out);
    json doc = json::parse(r.out.empty() ? "null" : r.out);
    if (doc.is_object() && doc["prediction"].is_object()) expect_schema_valid("check", doc["prediction"].dump());
    return doc;
  }
  // Each run of the stand-in, one argv a line (nothing with a real uv, which keeps no log).
  std::string uv_log() { return run("cat " + quote(tmp_ / "uv.log") + " 2>/dev/null").out; }
  size_t uv_runs() {
    std::string log = uv_log();
    return static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
  }

  // As uv makes it: `uv venv PROJECT/.venv`, then `wheels` installed by uv. No pip in it.
  Venv uv_venv(const std::string& project, const std::vector<std::string>& wheels) {
    fs::create_directories(tmp_ / project);
    CommandResult made = uv("venv .venv", tmp_ / project);
    EXPECT_EQ(made.status, 0) << made.err;
    Venv venv = Venv::existing(tmp_ / (project + "/.venv"));
    if (!wheels.empty()) {
      std::string args = "pip install --no-deps --no-index";
      for (const std::string& w : wheels) args += " " + quote(w);
      CommandResult r = uv(args, tmp_ / project);
      EXPECT_EQ(r.status, 0) << r.err;
    }
    return venv;
  }
  std::string installer_of(const Venv& venv, const std::string& dist_info) {
    return run("cat " + quote(venv.site() + "/" + dist_info + "/INSTALLER")).out;
  }

  std::string pure_wheel(const std::string& name, const std::string& version) {
    return make_wheel(tmp_ / "wheels",
                      {{"name", name}, {"version", version}, {"files", {{name + "/__init__.py", "v = 1\n"}}}});
  }

  std::string path_;
  bool real_uv_ = false;
};

// The first seed, typed as uv takes it: fake-cudnn-cu12 and fake-cudnn-cu13 both install
// libfakecudnn.so.9, which faketorch needs; `uv pip uninstall fake-cudnn-cu13` deletes it (uv
// removes every RECORD path, astral-sh/uv#15238). Refused before any file moves, the consumer
// and the file it loses named, the fix in uv's words; with --force uv runs and the real import
// fails as predicted.
TEST_F(UvTest, UninstallOfOneOfTwoOwnersIsRefusedBeforeAnyFileMoves) {
  std::vector<std::string> wheels = two_owners_wheels();
  Venv venv = uv_venv("proj", wheels);
  ASSERT_NE(run(quote(venv.python()) + " -m pip --version").err.find("No module named pip"), std::string::npos);
  ASSERT_EQ(installer_of(venv, "faketorch-2.0.dist-info"), "uv\n");
  ASSERT_EQ(venv.import("faketorch._C"), "");
  const std::string before = file_hashes(venv.dir());
  const std::string lost = venv.site() + "/fakenv/cudnn/lib/libfakecudnn.so.9";
  fs::create_directories(tmp_ / "proj/src");

  // From a subdirectory of the project: uv finds the .venv of the parent, and so does envdoctor.
  CommandResult r = envdoctor_uv("", "uninstall", "fake-cudnn-cu13", tmp_ / "proj/src");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("uv pip uninstall would remove fake-cudnn-cu13 9.1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("faketorch (installed by uv)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libfakecudnn.so.9: cannot open shared object file: No such file or directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(lost), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("uv pip install --python " + venv.python()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Refused: this change would introduce 2 errors; uv was not run and nothing changed."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("To make it anyway: envdoctor uv pip --force uninstall fake-cudnn-cu13"), std::string::npos)
      << r.out;
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // The same environment named by VIRTUAL_ENV, from anywhere; the JSON document.
  int status = -1;
  json doc = envdoctor_uv_json("uninstall", "fake-cudnn-cu13", "/", &status, nullptr, "VIRTUAL_ENV=" + venv.dir());
  EXPECT_EQ(status, 1);
  EXPECT_EQ(doc["installer"], "uv");
  EXPECT_EQ(doc["verdict"], "refused");
  EXPECT_EQ(doc["plan"]["remove"], json::parse(R"([{"name": "fake-cudnn-cu13", "version": "9.1"}])"));
  EXPECT_EQ(doc["prediction"]["environment"]["python"], venv.python());
  std::string predicted;
  for (const json& f : new_findings(doc["prediction"]))
    if (f["code"] == "missing-library" && f["package"] == "faketorch") predicted = f["message"];
  ASSERT_NE(predicted, "") << doc.dump(1);
  EXPECT_EQ(file_hashes(venv.dir()), before);
  EXPECT_EQ(venv.import("faketorch._C"), "");

  // --force: the prediction is printed, uv runs with the user's arguments, and the import fails
  // as predicted; the environment is then exactly as predicted.
  CommandResult forced = envdoctor_uv("--force", "uninstall", "fake-cudnn-cu13", tmp_ / "proj/src");
  EXPECT_EQ(forced.status, 0) << forced.out << forced.err;
  EXPECT_NE(forced.out.find("Refused"), std::string::npos) << forced.out;
  EXPECT_FALSE(fs::exists(lost));
  EXPECT_FALSE(fs::exists(venv.site() + "/fake_cudnn_cu13-9.1.dist-info"));
  EXPECT_EQ(venv.import("faketorch._C"), predicted);
  EXPECT_EQ(plain(venv.check()), plain(doc["prediction"]));
}

// The names of an uninstall come from the command line and from -r files: requirements.txt as
// pip reads it, pylock.toml by its [[packages]] names. Names not installed are skipped, in uv's
// words, when uv does not run.
TEST_F(UvTest, UninstallNamesFromRequirementsAndPylockFiles) {
  std::vector<std::string> wheels = two_owners_wheels();
  std::string leaf = pure_wheel("leaf", "1.0");
  wheels.push_back(leaf);
  Venv venv = uv_venv("proj", wheels);
  std::string lock =
      tmp_.write("locks/pylock.toml",
                 "lock-version = \"1.0\"\ncreated-by = \"uv\"\n\n[[packages]]\nname = \"fake-cudnn-cu13\"\n"
                 "version = \"9.1\"\n[[packages.wheels]]\nname = \"fake_cudnn_cu13-9.1-py3-none-any.whl\"\n\n"
                 "[[packages]]\nname = 'not-here'\n");
  std::string reqs = tmp_.write("locks/r.txt", "# the leaf\nLeaf==1.0  # pure\n");
  const std::string before = file_hashes(venv.dir());
  int status = -1;
  std::string err;
  json doc = envdoctor_uv_json("uninstall", "-p " + quote(venv.python()) + " -r " + quote(lock) + " -r " + quote(reqs),
                               "/", &status, &err);
  EXPECT_EQ(status, 1) << err;
  EXPECT_EQ(doc["plan"]["remove"],
            json::parse(R"([{"name": "fake-cudnn-cu13", "version": "9.1"}, {"name": "leaf", "version": "1.0"}])"))
      << doc.dump(1);
  EXPECT_EQ(doc["plan"]["not_installed"], json::parse(R"(["not-here"])"));
  EXPECT_NE(err.find(python::uv_not_installed_warning("not-here")), std::string::npos) << err;
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // Harmless: leaf alone, from its requirements file; uv runs and removes it.
  CommandResult r = envdoctor_uv("", "uninstall", "-r " + quote(reqs), tmp_ / "proj");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("No new errors: running uv."), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(venv.site() + "/leaf/__init__.py"));
  EXPECT_EQ(venv.import("faketorch._C"), "");
}

// The second seed: `uv pip install causal-conv1d` whose wheel links libcudart.so.12 into an
// environment whose CUDA runtime is 13. uv's dry run gives the plan, uv lays the wheel out in a
// scratch directory (removed afterwards), and the change is refused, nothing installed. The
// wheel file itself is checked without asking uv. A harmless install goes through. Then uv alone
// installs causal-conv1d and the import fails as predicted.
TEST_F(UvTest, InstallOfACuda12ExtensionIntoACuda13EnvironmentIsRefused) {
  auto [runtime, conv] = cuda12_extension_wheels();
  pure_wheel("leaf", "1.0");
  Venv venv = uv_venv("proj", {runtime});
  const std::string before = file_hashes(venv.dir());
  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");

  size_t runs = uv_runs();
  int status = -1;
  json doc = envdoctor_uv_json("install", "causal-conv1d" + index, tmp_ / "proj", &status);
  EXPECT_EQ(status, 1) << doc.dump(1);
  EXPECT_EQ(doc["verdict"], "refused");
  ASSERT_EQ(doc["plan"]["install"].size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["plan"]["install"][0]["name"], "causal-conv1d");
  EXPECT_EQ(doc["plan"]["install"][0]["version"], "1.5.0");
  std::string laid_out = doc["plan"]["install"][0]["wheel"];
  EXPECT_NE(laid_out.find("envdoctor-uv-"), std::string::npos) << laid_out;
  EXPECT_FALSE(fs::exists(fs::path(laid_out).parent_path())) << "the scratch directory is left";
  auto fresh = new_findings(doc["prediction"]);
  ASSERT_EQ(fresh.size(), 1u) << doc.dump(1);
  EXPECT_EQ(fresh[0]["code"], "missing-library");
  EXPECT_EQ(fresh[0]["library"], "libcudart.so.12");
  EXPECT_EQ(fresh[0]["package"], "causal-conv1d");
  EXPECT_EQ(file_hashes(venv.dir()), before);
  if (!real_uv_) {
    // uv was asked twice: its dry run, then the layout of the planned wheel.
    EXPECT_EQ(uv_runs(), runs + 2) << uv_log();
    EXPECT_NE(uv_log().find("\"--dry-run\""), std::string::npos) << uv_log();
    EXPECT_NE(uv_log().find("\"--target\""), std::string::npos) << uv_log();
  }

  CommandResult text = envdoctor_uv("", "install", "causal-conv1d" + index, tmp_ / "proj");
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("uv pip install would install causal-conv1d 1.5.0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("libcudart.so.12: cannot open shared object file"), std::string::npos) << text.out;

  // The wheel file itself: its requirement is met, so uv is not asked; the same refusal.
  runs = uv_runs();
  json direct = envdoctor_uv_json("install", quote(conv), tmp_ / "proj", &status);
  EXPECT_EQ(status, 1) << direct.dump(1);
  ASSERT_EQ(direct["plan"]["install"].size(), 1u) << direct.dump(1);
  EXPECT_EQ(direct["plan"]["install"][0]["wheel"], conv);
  auto direct_fresh = new_findings(direct["prediction"]);
  ASSERT_EQ(direct_fresh.size(), 1u) << direct.dump(1);
  EXPECT_EQ(direct_fresh[0]["message"], fresh[0]["message"]);
  if (!real_uv_) EXPECT_EQ(uv_runs(), runs) << uv_log();
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // A harmless install goes through: uv installs it, as predicted.
  std::string err;
  json leaf = envdoctor_uv_json("install", "leaf" + index, tmp_ / "proj", &status, &err);
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(leaf["verdict"], "safe");
  EXPECT_TRUE(fs::exists(venv.site() + "/leaf/__init__.py"));
  EXPECT_EQ(installer_of(venv, "leaf-1.0.dist-info"), "uv\n");
  EXPECT_EQ(plain(venv.check()), plain(leaf["prediction"]));

  // The referee: uv alone installs causal-conv1d, and the import fails with the predicted words.
  CommandResult real = uv("pip install causal-conv1d" + index, tmp_ / "proj");
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(venv.import("causal_conv1d._cc"), fresh[0]["message"].get<std::string>());
}

// What uv cannot plan is said before anything runs: no environment to find (uv's words), uv's
// --target, and a requirement uv cannot resolve (uv's own words and status, nothing installed).
TEST_F(UvTest, WhatCannotBeCheckedIsSaidAndNothingRuns) {
  fs::create_directories(tmp_ / "nowhere");
  CommandResult none = envdoctor_uv("", "uninstall", "leaf", tmp_ / "nowhere");
  EXPECT_EQ(none.status, 2);
  CommandResult uv_says = uv("pip uninstall leaf", tmp_ / "nowhere");
  EXPECT_NE(uv_says.status, 0);
  EXPECT_NE(uv_says.err.find("No virtual environment found"), std::string::npos) << uv_says.err;
  EXPECT_NE(none.err.find("No virtual environment found; run `uv venv` to create an environment, or pass "
                          "`--system` to install into a non-virtual environment"),
            std::string::npos)
      << none.err;

  Venv venv = uv_venv("proj", {});
  CommandResult target = envdoctor_uv("", "install", "--target " + quote(tmp_ / "t") + " leaf", tmp_ / "proj");
  EXPECT_EQ(target.status, 2) << target.err;
  EXPECT_NE(target.err.find("uv's --target " + (tmp_ / "t") + " installs into another directory"), std::string::npos)
      << target.err;
  EXPECT_FALSE(fs::exists(tmp_ / "t"));

  CommandResult missing =
      envdoctor_uv("", "install", "nosuchproject --no-index --find-links " + quote(tmp_ / "wheels"), tmp_ / "proj");
  CommandResult referee =
      uv("pip install --dry-run nosuchproject --no-index --find-links " + quote(tmp_ / "wheels"), tmp_ / "proj");
  EXPECT_NE(referee.status, 0);
  EXPECT_EQ(missing.status, referee.status) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("Cannot check this change, so nothing was installed."), std::string::npos) << missing.out;
  EXPECT_EQ(run("ls " + quote(venv.site()) + " | grep -c dist-info").out, "0\n") << "nothing installed";
}

// A distribution laid out by `uv pip install --target DIR --no-deps` is read as its wheel is: every
// file the wheel installs goes to the same place in a scheme (python/laid_out.h against
// python/wheel.h, the referee), and what the layout adds is the installer's own record (INSTALLER,
// REQUESTED, bytecode), nothing else.
TEST_F(UvTest, LaidOutDistributionIsPlacedAsItsWheelIs) {
  std::string lib = tmp_ / "build/libleaf.so";
  build_shared(lib, "int leaf(void) { return 1; }", "-Wl,-soname,libleaf.so", tmp_);
  std::string wheel_path = platlib_wheel("Leaf_Ext", "2.0", {{"leaf_ext/lib/libleaf.so", lib}},
                                         {{"leaf_ext/__init__.py", "x = 1\n"}, {"leaf_ext/sub/data.txt", "d\n"}});
  Venv venv = uv_venv("proj", {});
  std::string dir = tmp_ / "laid-out";
  CommandResult r =
      uv("pip install --target " + quote(dir) + " --no-deps --only-binary :all: --python " + quote(venv.python()) +
             " --no-index --find-links " + quote(tmp_ / "wheels") + " leaf-ext==2.0",
         tmp_ / "proj");
  ASSERT_EQ(r.status, 0) << r.err;

  std::string error;
  std::optional<python::LaidOutDistribution> laid_out = python::LaidOutDistribution::open(dir, &error);
  ASSERT_TRUE(laid_out) << error;
  std::unique_ptr<python::Wheel> wheel = python::Wheel::open(wheel_path, &error);
  ASSERT_TRUE(wheel) << error;
  EXPECT_EQ(laid_out->metadata().name, wheel->metadata().name);
  EXPECT_EQ(laid_out->metadata().version, "2.0");
  python::InstallScheme scheme{"/s/pure", "/s/plat", "/s/bin", "/s/include", "/s"};
  std::set<std::string> from_wheel, from_dir;
  for (const auto& [member, dest] : wheel->install_plan(scheme))
    if (!dest.string().ends_with(".dist-info/RECORD")) from_wheel.insert(dest.string());
  for (const auto& [file, dest] : laid_out->install_plan(scheme)) {
    std::string d = dest.string();
    bool installers_own = d.ends_with("/INSTALLER") || d.ends_with("/REQUESTED") || d.ends_with("/RECORD") ||
                          d.find("/__pycache__/") != std::string::npos;
    if (!installers_own) from_dir.insert(d);
  }
  EXPECT_EQ(from_dir, from_wheel);
  EXPECT_TRUE(from_dir.count("/s/plat/leaf_ext/lib/libleaf.so")) << "a platlib wheel goes to platlib";
  python::Distribution installed = laid_out->as_installed(scheme);
  EXPECT_EQ(installed.metadata_dir, "/s/plat/Leaf_Ext-2.0.dist-info");
  EXPECT_EQ(installed.installer, "uv");
  EXPECT_FALSE(python::LaidOutDistribution::open(tmp_ / "wheels", &error));
  EXPECT_EQ(error, (tmp_ / "wheels") + " holds no .dist-info directory");
}

// The dry run's lines as uv documents them.
TEST(UvDryRun, ReadsThePlanLines) {
  std::string error;
  auto plan = python::parse_uv_dry_run(
      "Resolved 3 packages in 12ms\nWould download 1 package\nWould uninstall 1 package\nWould install 3 packages\n"
      " - corepkg==1.0\n + corepkg==2.0\n + leaf==1.0 (from file:///w/leaf-1.0-py3-none-any.whl)\n"
      " + other @ https://example.org/other-2.0-py3-none-any.whl\n ~ again==3.0\n",
      &error);
  ASSERT_TRUE(plan) << error;
  ASSERT_EQ(plan->lines.size(), 5u);
  EXPECT_EQ(plan->lines[0].change, '-');
  EXPECT_EQ(plan->lines[0].version, "1.0");
  EXPECT_EQ(plan->lines[1].name, "corepkg");
  EXPECT_EQ(plan->lines[1].version, "2.0");
  EXPECT_EQ(plan->lines[2].url, "file:///w/leaf-1.0-py3-none-any.whl");
  EXPECT_EQ(plan->lines[2].version, "1.0");
  EXPECT_EQ(plan->lines[3].name, "other");
  EXPECT_EQ(plan->lines[3].url, "https://example.org/other-2.0-py3-none-any.whl");
  EXPECT_EQ(plan->lines[4].change, '~');
  EXPECT_FALSE(plan->no_changes);
  auto nothing = python::parse_uv_dry_run("Audited 1 package in 3ms\nWould make no changes\n", &error);
  ASSERT_TRUE(nothing);
  EXPECT_TRUE(nothing->no_changes);
  EXPECT_TRUE(nothing->lines.empty());
  EXPECT_FALSE(python::parse_uv_dry_run("error: something else\n", &error));
}

// uv's documented order: --python (a path, a directory, a request), --system, VIRTUAL_ENV,
// CONDA_PREFIX, then a .venv in the current directory or the nearest parent.
TEST(UvDiscovery, FindsTheEnvironmentInUvsOrder) {
  TempDir tmp;
  tmp.write("proj/.venv/pyvenv.cfg", "home = /usr/bin\n");
  fs::create_directories(tmp / "proj/a/b");
  python::UvDiscoveryContext context;
  context.cwd = tmp / "proj/a/b";
  context.find_program = [](const std::string& name) { return name == "python3.12" ? std::string("/opt/py312") : ""; };
  std::string error;
  auto found = [&](python::UvTargetOptions options) {
    return python::uv_environment_python(options, context, &error).value_or("none: " + error);
  };
  EXPECT_EQ(found({}), tmp / "proj/.venv/bin/python");
  context.conda_prefix = "/c";
  EXPECT_EQ(found({}), "/c/bin/python");
  context.virtual_env = "/v";
  EXPECT_EQ(found({}), "/v/bin/python");
  EXPECT_EQ(found({"3.12", false, "", ""}), "/opt/py312");
  EXPECT_EQ(found({"python3.12", false, "", ""}), "/opt/py312");
  EXPECT_EQ(found({tmp / "proj/.venv", false, "", ""}), tmp / "proj/.venv/bin/python");
  EXPECT_EQ(found({"3.9", false, "", ""}), "none: No interpreter found for 3.9 in the system path");
  EXPECT_EQ(found({"", true, "", ""}), "none: No system Python installation found");
  context.virtual_env.clear();
  context.conda_prefix.clear();
  context.cwd = "/";
  EXPECT_EQ(found({}).rfind("none: No virtual environment found", 0), 0u);
  EXPECT_EQ(python::uv_target_options({"-p", "/x/python", "--target=/t", "--system"}).python, "/x/python");
  EXPECT_EQ(python::uv_target_options({"-p/y", "--target=/t"}).target, "/t");
}

// An uninstall's names: option values are not names (uv's -p takes one), pylock.toml is read by
// its [[packages]] names, requirements files as pip reads them.
TEST(UvArguments, UninstallNames) {
  TempDir tmp;
  std::string lock = tmp.write("pylock.dev.toml",
                               "[[packages]]\nname = \"a-pkg\"\n[packages.sdist]\nname = \"x.tar.gz\"\n"
                               "[[packages]]\nname = \"b\"\n[tool.uv]\nname = \"c\"\n");
  std::string reqs = tmp.write("r.txt", "A_Pkg>=1\nd ; python_version > '3'\n");
  std::string error;
  auto names = python::uv_uninstall_names({"-p", "/v/bin/python", "e", "-r", lock, "--requirements=" + reqs}, &error);
  ASSERT_TRUE(names) << error;
  EXPECT_EQ(*names, (std::vector<std::string>{"e", "a-pkg", "b", "d"}));
  EXPECT_EQ(python::uv_index_options({"--no-index", "-f", "/w", "-U", "x", "--index-url=https://i", "--offline"}),
            (std::vector<std::string>{"--no-index", "-f", "/w", "--index-url=https://i", "--offline"}));
}

}  // namespace
}  // namespace envdoctor::test
