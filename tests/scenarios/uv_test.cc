// `envdoctor uv pip install|uninstall` against the real uv: the pinned uv 0.13.9 of
// tests/requirements/tools.txt (fixtures/referees.h; the tests skip without it), alone on PATH as
// `uv`. Environments made by `uv venv` (no pip in them), packages installed by uv (INSTALLER says
// uv), real wheelhouses (`--no-index --find-links DIR`), uv's own cache in the test's directory.
//
// Each plan envdoctor simulates is held to what uv then does: the same plan, read from uv and
// applied in this process as `envdoctor uv pip` applies it (scenarios/uv_plan.h,
// scenarios/simulation.h), predicts every file of the environment, present or absent, with its
// sha256; uv then makes the change, and the environment on disk must be exactly that. A refused
// change leaves every file's sha256 as it was, and when uv then makes it anyway, the import it
// breaks fails with the predicted message.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "environment/session.h"
#include "fixtures/referees.h"
#include "fixtures/venv.h"
#include "python/laid_out.h"
#include "python/pip.h"
#include "python/uv.h"
#include "python/wheel.h"
#include "scenarios/simulation.h"
#include "scenarios/uv_plan.h"
#include "support/text.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// Every file below `dir` with its sha256, bytecode caches left out: equal before and after means
// no file moved, appeared or changed.
std::string file_hashes(const std::string& dir) {
  return run("cd " + quote(dir) + " && find . -type f ! -path '*__pycache__*' -print0 | sort -z | xargs -0 sha256sum")
      .out;
}

std::string sha256_hex(const fs::path& path) {
  std::string bytes = slurp(path);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return support::hex(std::vector<u8>(digest, digest + size));
}

// What an installer writes for itself rather than from the distribution, and the simulation does
// not lay: a .dist-info's RECORD (rewritten), INSTALLER, REQUESTED, direct_url.json and
// uv_cache.json, and the `.lock` uv keeps in an environment's root while it changes it.
bool installers_own(const fs::path& path) {
  static const std::set<std::string> kOwn = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"};
  if (path.filename() == ".lock") return true;
  return path.parent_path().filename().string().ends_with(".dist-info") && kOwn.count(path.filename().string());
}

// A tree of files: path -> sha256 (a link: "-> target"), bytecode caches and installers' own
// files left out.
using Tree = std::map<std::string, std::string>;

void add_tree(const std::string& root, Tree& out) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (installers_own(path)) continue;
    if (it->is_symlink()) out[path.string()] = "-> " + fs::read_symlink(path).string();
    else if (it->is_regular_file()) out[path.string()] = sha256_hex(path);
  }
}

Tree tree_on_disk(const std::vector<std::string>& roots) {
  Tree out;
  for (const std::string& root : roots) add_tree(root, out);
  return out;
}

// What differs between the tree predicted and the one on disk, one line each; "" when none.
std::string differences(const Tree& predicted, const Tree& actual) {
  std::string out;
  for (const auto& [path, sha] : predicted) {
    auto it = actual.find(path);
    if (it == actual.end()) out += "predicted, not on disk: " + path + "\n";
    else if (it->second != sha) out += "other content on disk: " + path + "\n";
  }
  for (const auto& [path, sha] : actual)
    if (!predicted.count(path)) out += "on disk, not predicted: " + path + "\n";
  return out;
}

// The lines of `text` that start with `prefix`, in order.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

// uv's summary lines (" - leaf==1.0 (from file:///w/leaf-1.0-py3-none-any.whl)") without where
// each distribution came from.
std::vector<std::string> without_origins(std::vector<std::string> lines) {
  for (std::string& line : lines)
    if (size_t from = line.find(" (from "); from != std::string::npos) line.resize(from);
  return lines;
}

// Environment variables set in this process for a scope, and put back as they were.
class ScopedVariables {
 public:
  // `value` nullopt: unset.
  explicit ScopedVariables(const std::vector<std::pair<std::string, std::optional<std::string>>>& variables) {
    for (const auto& [name, value] : variables) {
      const char* old = ::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  ~ScopedVariables() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }
  ScopedVariables(const ScopedVariables&) = delete;
  ScopedVariables& operator=(const ScopedVariables&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The interpreter `uv venv` is given: the one python3 on PATH runs, whose headers and EXT_SUFFIX
// build the tests' extension modules.
const std::string& python3_executable() {
  static const std::string exe = [] {
    std::string out = run("python3 -c 'import sys; print(sys.executable)'").out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }();
  return exe;
}

class UvTest : public VenvTest {
 protected:
  void SetUp() override {
    VenvTest::SetUp();
    if (IsSkipped()) return;
    std::string why;
    std::string uv = pinned_tool("uv", &why);
    if (uv.empty()) GTEST_SKIP() << why;
    // The pinned uv alone on PATH as `uv`: not the tools venv's python beside it.
    fs::create_directories(tmp_ / "uvbin");
    fs::create_symlink(uv, tmp_ / "uvbin/uv");
    path_ = tmp_ / "uvbin" + ":" + run("printf %s \"$PATH\"").out;
  }

  // What every run of uv here gets, envdoctor's included: PATH with the pinned uv, the variables
  // uv's discovery reads cleared (each test says which it sets), a cache of the test's own, no
  // interpreter downloads and no configuration files but the test's.
  std::vector<std::pair<std::string, std::optional<std::string>>> uv_variables() const {
    return {{"PATH", path_},
            {"VIRTUAL_ENV", std::nullopt},
            {"CONDA_PREFIX", std::nullopt},
            {"UV_PYTHON", std::nullopt},
            {"UV_SYSTEM_PYTHON", std::nullopt},
            {"UV_CACHE_DIR", tmp_ / "uv-cache"},
            {"UV_PYTHON_DOWNLOADS", "never"},
            {"UV_NO_CONFIG", "1"}};
  }

  // A command run as the user would type it in `dir`, with `variables` ("VIRTUAL_ENV=/v") set.
  CommandResult in_shell(const std::string& command, const std::string& dir, const std::string& variables = "") {
    std::string env = "env", set;  // env's options before its assignments
    for (const auto& [name, value] : uv_variables()) {
      if (value) set += " " + name + "=" + quote(*value);
      else env += " -u " + name;
    }
    env += set;
    return run("cd " + quote(dir) + " && " + env + " " + variables + " " + command + " </dev/null");
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

  // As uv makes it: `uv venv PROJECT/.venv`, then `wheels` installed by uv. No pip in it.
  Venv uv_venv(const std::string& project, const std::vector<std::string>& wheels) {
    fs::create_directories(tmp_ / project);
    CommandResult made = uv("venv --python " + quote(python3_executable()) + " .venv", tmp_ / project);
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

  // The trees below `roots` as envdoctor's simulation of `uv pip ACTION -p VENV ARGS` leaves them:
  // uv's plan, read from uv and applied as `envdoctor uv pip` applies it, in this process, with
  // every file the change writes hashed. Expects a plan that can be checked.
  Tree simulated(const Venv& venv, const std::string& action, std::vector<std::string> args,
                 std::vector<std::string> roots = {}) {
    if (roots.empty()) roots = {venv.dir()};
    ScopedVariables uv_environment(uv_variables());
    std::string error;
    std::optional<environment::Session> session = environment::open_session({venv.python(), "", false, {}}, &error);
    EXPECT_TRUE(session) << error;
    if (!session) return {};
    const environment::Environment& env = *session->env;
    args.insert(args.begin(), {"-p", venv.python()});
    std::optional<scenarios::PipPlan> plan = action == "install" ? scenarios::plan_uv_install(env, args, &error)
                                                                 : scenarios::plan_uv_uninstall(env, args, &error);
    EXPECT_TRUE(plan) << error;
    if (!plan) return {};
    EXPECT_EQ(plan->cannot_check, "");
    scenarios::Changes changes = plan->changes();
    changes.hash_members = true;
    std::vector<checks::Finding> findings;
    std::unique_ptr<environment::Environment> changed = scenarios::apply_changes(env, changes, &findings, &error);
    EXPECT_TRUE(changed) << error;
    if (!changed) return {};
    Tree out = tree_on_disk(roots);
    const environment::FileView& files = changed->files;
    for (const std::string& path : files.changed_paths()) {
      if (installers_own(path) || path.find("/__pycache__/") != std::string::npos ||
          std::none_of(roots.begin(), roots.end(), [&](const std::string& r) { return path.rfind(r + "/", 0) == 0; }))
        continue;
      std::optional<std::vector<u8>> digest = files.exists(path) ? files.sha256(path) : std::nullopt;
      if (files.exists(path)) out[path] = digest ? support::hex(*digest) : "unreadable";
      else out.erase(path);
    }
    return out;
  }

  // The environment on disk is the one predicted, file for file.
  void expect_as_simulated(const Tree& predicted, const std::vector<std::string>& roots) {
    EXPECT_EQ(differences(predicted, tree_on_disk(roots)), "");
  }

  std::string path_;
};

// The first seed, typed as uv takes it: fake-cudnn-cu12 and fake-cudnn-cu13 both install
// libfakecudnn.so.9, which faketorch needs; `uv pip uninstall fake-cudnn-cu13` deletes it (uv
// removes every RECORD path, whoever else lists it). Refused before any file moves, the consumer
// and the file it loses named, the fix in uv's words; with --force uv runs, the environment is
// file for file the one simulated, and the real import fails as predicted.
TEST_F(UvTest, UninstallOfOneOfTwoOwnersIsRefusedBeforeAnyFileMoves) {
  std::vector<std::string> wheels = two_owners_wheels();
  Venv venv = uv_venv("proj", wheels);
  ASSERT_NE(run(quote(venv.python()) + " -m pip --version").err.find("No module named pip"), std::string::npos);
  ASSERT_EQ(installer_of(venv, "faketorch-2.0.dist-info"), "uv");
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

  // --force: the prediction is printed, uv runs with the user's arguments, the environment is the
  // one simulated, and the import fails as predicted.
  Tree simulation = simulated(venv, "uninstall", {"fake-cudnn-cu13"});
  EXPECT_FALSE(simulation.count(lost));
  CommandResult forced = envdoctor_uv("--force", "uninstall", "fake-cudnn-cu13", tmp_ / "proj/src");
  EXPECT_EQ(forced.status, 0) << forced.out << forced.err;
  EXPECT_NE(forced.out.find("Refused"), std::string::npos) << forced.out;
  expect_as_simulated(simulation, {venv.dir()});
  EXPECT_FALSE(fs::exists(lost));
  EXPECT_FALSE(fs::exists(venv.site() + "/fake_cudnn_cu13-9.1.dist-info"));
  EXPECT_EQ(venv.import("faketorch._C"), predicted);
  EXPECT_EQ(plain(venv.check()), plain(doc["prediction"]));
}

// An uninstall's plan is uv's own dry run: its reading of names and `-r` files (a requirements
// file names Fake_CuDNN.cu13), its matching. Names that are not installed are skipped, and when uv
// does not run, envdoctor says so in uv's words: the very lines uv prints when it then runs. A PEP
// 751 pylock.toml names nothing to uninstall in uv 0.13.9, and beside other names uv refuses it:
// envdoctor says what uv says, and nothing changes.
TEST_F(UvTest, UninstallTakesItsPlanFromUv) {
  std::vector<std::string> wheels = two_owners_wheels();
  std::string leaf = pure_wheel("leaf", "1.0");
  wheels.push_back(leaf);
  Venv venv = uv_venv("proj", wheels);
  tmp_.write("proj/r.txt", "# the library's second owner\nFake_CuDNN.cu13==9.1  # pinned\n");
  const std::string args = "-r r.txt Zed Not_Here Leaf";
  const std::string before = file_hashes(venv.dir());

  int status = -1;
  std::string err;
  json doc = envdoctor_uv_json("uninstall", args, tmp_ / "proj", &status, &err);
  EXPECT_EQ(status, 1) << err;
  EXPECT_EQ(doc["plan"]["remove"],
            json::parse(R"([{"name": "fake-cudnn-cu13", "version": "9.1"}, {"name": "leaf", "version": "1.0"}])"))
      << doc.dump(1);
  EXPECT_EQ(doc["plan"]["not_installed"], json::parse(R"(["not-here", "zed"])"));
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // A lock file: nothing to uninstall, and uv runs to say so; beside a name, uv's refusal.
  tmp_.write("proj/lock.in", "leaf==1.0\n");
  CommandResult locked = uv(
      "pip compile --format pylock.toml --no-index --find-links " + quote(tmp_ / "wheels") + " -o pylock.toml lock.in",
      tmp_ / "proj");
  ASSERT_EQ(locked.status, 0) << locked.err;
  std::string lock_err;
  json lock = envdoctor_uv_json("uninstall", "-r pylock.toml", tmp_ / "proj", &status, &lock_err);
  EXPECT_EQ(status, 0) << lock_err;
  EXPECT_EQ(lock["plan"]["remove"], json::array());
  EXPECT_NE(lock_err.find("warning: No packages to uninstall"), std::string::npos) << lock_err;
  CommandResult mixed = envdoctor_uv("", "uninstall", "-r pylock.toml leaf", tmp_ / "proj");
  CommandResult uv_mixed = uv("pip uninstall -r pylock.toml leaf", tmp_ / "proj");
  EXPECT_NE(uv_mixed.status, 0);
  EXPECT_EQ(mixed.status, uv_mixed.status) << mixed.out << mixed.err;
  ASSERT_EQ(lines_starting(uv_mixed.err, "error: ").size(), 1u) << uv_mixed.err;
  EXPECT_NE(mixed.out.find(lines_starting(uv_mixed.err, "error: ")[0]), std::string::npos) << mixed.out;
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // The referee: uv itself, the first command. It removes what the plan says, warns as envdoctor
  // did, and leaves the environment as simulated.
  Tree simulation = simulated(venv, "uninstall", {"-r", tmp_ / "proj/r.txt", "Zed", "Not_Here", "Leaf"});
  CommandResult real = uv("pip uninstall " + args, tmp_ / "proj");
  ASSERT_EQ(real.status, 0) << real.err;
  EXPECT_EQ(lines_starting(real.err, "warning: Skipping"), lines_starting(err, "warning: Skipping")) << real.err;
  EXPECT_EQ(without_origins(lines_starting(real.err, " - ")),
            (std::vector<std::string>{" - fake-cudnn-cu13==9.1", " - leaf==1.0"}))
      << real.err;
  expect_as_simulated(simulation, {venv.dir()});

  // A harmless uninstall runs uv, and leaves the environment as simulated.
  Venv other = uv_venv("other", {leaf});
  Tree harmless = simulated(other, "uninstall", {"leaf"});
  CommandResult r = envdoctor_uv("", "uninstall", "leaf", tmp_ / "other");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("No new errors: running uv."), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(other.site() + "/leaf/__init__.py"));
  expect_as_simulated(harmless, {other.dir()});
}

// The second seed: `uv pip install causal-conv1d` whose wheel links libcudart.so.12 into an
// environment whose CUDA runtime is 13. uv's dry run gives the plan (read through the user's own
// -q and --color, which envdoctor's dry run leaves out), uv lays the wheel out in a scratch
// directory (removed afterwards), and the change is refused, nothing installed. The wheel file
// itself is read in place. A harmless install goes through as simulated; then uv alone installs
// causal-conv1d, the environment is the one simulated, and the import fails as predicted.
TEST_F(UvTest, InstallOfACuda12ExtensionIntoACuda13EnvironmentIsRefused) {
  auto [runtime, conv] = cuda12_extension_wheels();
  pure_wheel("leaf", "1.0");
  Venv venv = uv_venv("proj", {runtime});
  const std::string before = file_hashes(venv.dir());
  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");

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

  CommandResult text = envdoctor_uv("", "install", "-q --color always causal-conv1d" + index, tmp_ / "proj");
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("uv pip install would install causal-conv1d 1.5.0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("libcudart.so.12: cannot open shared object file"), std::string::npos) << text.out;

  // The wheel file itself, which uv plans as `causal-conv1d @ file://...`: read in place.
  json direct = envdoctor_uv_json("install", quote(conv) + " --no-index", tmp_ / "proj", &status);
  EXPECT_EQ(status, 1) << direct.dump(1);
  ASSERT_EQ(direct["plan"]["install"].size(), 1u) << direct.dump(1);
  EXPECT_EQ(direct["plan"]["install"][0]["wheel"], conv);
  EXPECT_EQ(direct["plan"]["install"][0]["version"], "1.5.0");
  auto direct_fresh = new_findings(direct["prediction"]);
  ASSERT_EQ(direct_fresh.size(), 1u) << direct.dump(1);
  EXPECT_EQ(direct_fresh[0]["message"], fresh[0]["message"]);
  EXPECT_EQ(file_hashes(venv.dir()), before);

  // A harmless install goes through: uv installs it, as simulated.
  Tree harmless = simulated(venv, "install", {"leaf", "--no-index", "--find-links", tmp_ / "wheels"});
  std::string err;
  json leaf = envdoctor_uv_json("install", "leaf" + index, tmp_ / "proj", &status, &err);
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(leaf["verdict"], "safe");
  EXPECT_EQ(installer_of(venv, "leaf-1.0.dist-info"), "uv");
  expect_as_simulated(harmless, {venv.dir()});
  EXPECT_EQ(plain(venv.check()), plain(leaf["prediction"]));

  // The referee: uv alone installs causal-conv1d, as simulated, and the import fails with the
  // predicted words.
  Tree broken = simulated(venv, "install", {"causal-conv1d", "--no-index", "--find-links", tmp_ / "wheels"});
  CommandResult real = uv("pip install causal-conv1d" + index, tmp_ / "proj");
  ASSERT_EQ(real.status, 0) << real.err;
  expect_as_simulated(broken, {venv.dir()});
  EXPECT_EQ(venv.import("causal_conv1d._cc"), fresh[0]["message"].get<std::string>());
}

// uv's second rule: a RECORD row that names a directory removes that whole tree, files that only
// another distribution lists included. fake-cudnn-extras lists fakenv/cudnn/lib itself (a row
// that names no member of its wheel, which pip keeps when it installs one), and a path outside
// the environment, which uv leaves alone. Uninstalling it with uv takes libfakecudnn.so.9, which
// fake-cudnn-cu13 installed and faketorch needs: refused; made anyway, as simulated.
TEST_F(UvTest, ARecordRowNamingADirectoryRemovesItsTree) {
  std::vector<std::string> wheels = two_owners_wheels();
  Venv venv = uv_venv("proj", {wheels[1], wheels[2]});
  // From the site directory (proj/.venv/lib/python3.X/site-packages) up to the test's directory.
  std::string outside = tmp_.write("outside/keep.txt", "kept\n");
  std::string extras = wheel({{"name", "fake-cudnn-extras"},
                              {"version", "1.0"},
                              {"files", {{"fakenv/cudnn/lib/extras.txt", "x\n"}}},
                              {"record_extra", {"fakenv/cudnn/lib,,", "../../../../../outside/keep.txt,,"}}});
  venv.install({extras});
  ASSERT_NE(slurp(venv.site() + "/fake_cudnn_extras-1.0.dist-info/RECORD").find("\nfakenv/cudnn/lib,,\r\n"),
            std::string::npos);
  ASSERT_EQ(fs::weakly_canonical(venv.site() + "/../../../../../outside/keep.txt"), fs::path(outside));
  ASSERT_EQ(venv.import("faketorch._C"), "");
  const std::string lost = venv.site() + "/fakenv/cudnn/lib/libfakecudnn.so.9";
  const std::string before = file_hashes(venv.dir());

  int status = -1;
  json doc = envdoctor_uv_json("uninstall", "fake-cudnn-extras", tmp_ / "proj", &status);
  EXPECT_EQ(status, 1) << doc.dump(1);
  std::string predicted;
  for (const json& f : new_findings(doc["prediction"]))
    if (f["code"] == "missing-library" && f["package"] == "faketorch") predicted = f["message"];
  EXPECT_EQ(predicted, "libfakecudnn.so.9: cannot open shared object file: No such file or directory") << doc.dump(1);
  auto missing = findings(doc["prediction"], "record-missing-file");
  EXPECT_TRUE(std::any_of(missing.begin(), missing.end(), [&](const json& f) { return f["file"] == lost; }))
      << doc.dump(1);
  EXPECT_EQ(file_hashes(venv.dir()), before);

  Tree simulation = simulated(venv, "uninstall", {"fake-cudnn-extras"}, {venv.dir(), tmp_ / "outside"});
  EXPECT_FALSE(simulation.count(lost));
  EXPECT_TRUE(simulation.count(outside));
  CommandResult forced = envdoctor_uv("--force", "uninstall", "fake-cudnn-extras", tmp_ / "proj");
  EXPECT_EQ(forced.status, 0) << forced.out << forced.err;
  EXPECT_NE(forced.err.find("escapes the Python environment"), std::string::npos) << forced.err;
  expect_as_simulated(simulation, {venv.dir(), tmp_ / "outside"});
  EXPECT_FALSE(fs::exists(fs::path(lost).parent_path()));
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_EQ(venv.import("faketorch._C"), predicted);
  EXPECT_EQ(plain(venv.check()), plain(doc["prediction"]));
}

// uv's third rule: `uv pip install` removes every distribution it replaces before it installs
// any. a-lib and b-lib 1.0 both ship sharedlib/libshared.so, which user-ext's extension needs;
// a-lib 2.0 ships it too, b-lib 2.0 no more. Upgrading both at once keeps the library (b-lib
// 1.0's removal comes before a-lib 2.0 writes it, whatever the order of uv's lines), so uv runs;
// upgrading b-lib alone deletes it with b-lib 1.0 (a path two RECORDs list goes with either):
// refused. Both as simulated.
TEST_F(UvTest, AnInstallRemovesEveryReplacedDistributionBeforeInstallingAny) {
  std::string lib = tmp_ / "build/libshared.so";
  build_shared(lib, "int shared_fn(void) { return 7; }", "-Wl,-soname,libshared.so", tmp_);
  std::string ext = tmp_ / ("build/user_ext/_u" + suffix_);
  build_ext(ext, "_u", "int shared_fn(void);", "shared_fn()", quote(lib) + " -Wl,-rpath,'$ORIGIN/../sharedlib'");
  std::vector<std::string> old = {
      platlib_wheel("a-lib", "1.0", {{"sharedlib/libshared.so", lib}}, {{"a_lib/__init__.py", ""}}),
      platlib_wheel("b-lib", "1.0", {{"sharedlib/libshared.so", lib}}, {{"b_lib/__init__.py", ""}}),
      platlib_wheel("user-ext", "1.0", {{"user_ext/_u" + suffix_, ext}}, {{"user_ext/__init__.py", ""}}, {"a-lib"})};
  platlib_wheel("a-lib", "2.0", {{"sharedlib/libshared.so", lib}}, {{"a_lib/__init__.py", ""}});
  platlib_wheel("b-lib", "2.0", json::object(), {{"b_lib/__init__.py", ""}});
  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");
  const std::string shared = "/sharedlib/libshared.so";

  Venv both = uv_venv("both", old);
  ASSERT_EQ(both.import("user_ext._u"), "");
  Tree kept = simulated(both, "install", {"a-lib==2.0", "b-lib==2.0", "--no-index", "--find-links", tmp_ / "wheels"});
  EXPECT_TRUE(kept.count(both.site() + shared));
  int status = -1;
  std::string err;
  json doc = envdoctor_uv_json("install", "a-lib==2.0 b-lib==2.0" + index, tmp_ / "both", &status, &err);
  EXPECT_EQ(status, 0) << err << doc.dump(1);
  EXPECT_EQ(doc["verdict"], "safe");
  EXPECT_EQ(doc["plan"]["remove"],
            json::parse(R"([{"name": "a-lib", "version": "1.0"}, {"name": "b-lib", "version": "1.0"}])"));
  expect_as_simulated(kept, {both.dir()});
  EXPECT_EQ(both.import("user_ext._u"), "");

  Venv alone = uv_venv("alone", old);
  const std::string before = file_hashes(alone.dir());
  json refused = envdoctor_uv_json("install", "b-lib==2.0" + index, tmp_ / "alone", &status);
  EXPECT_EQ(status, 1) << refused.dump(1);
  std::string predicted;
  for (const json& f : new_findings(refused["prediction"]))
    if (f["code"] == "missing-library" && f["package"] == "user-ext") predicted = f["message"];
  EXPECT_EQ(predicted, "libshared.so: cannot open shared object file: No such file or directory") << refused.dump(1);
  EXPECT_EQ(file_hashes(alone.dir()), before);
  Tree lost = simulated(alone, "install", {"b-lib==2.0", "--no-index", "--find-links", tmp_ / "wheels"});
  EXPECT_FALSE(lost.count(alone.site() + shared));
  CommandResult real = uv("pip install b-lib==2.0" + index, tmp_ / "alone");
  ASSERT_EQ(real.status, 0) << real.err;
  expect_as_simulated(lost, {alone.dir()});
  EXPECT_EQ(alone.import("user_ext._u"), predicted);
}

// What cannot be checked is said before anything runs, in uv's words where uv has them: no
// environment to find, a requirement uv cannot resolve, a requirements file uv cannot read (uv's
// status each time); uv's --target; no uv on PATH.
TEST_F(UvTest, WhatCannotBeCheckedIsSaidAndNothingRuns) {
  fs::create_directories(tmp_ / "nowhere");
  CommandResult none = envdoctor_uv("", "uninstall", "leaf", tmp_ / "nowhere");
  CommandResult uv_says = uv("pip uninstall leaf", tmp_ / "nowhere");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(uv_says.status, 2);
  EXPECT_EQ(none.err,
            "envdoctor: No virtual environment found; run `uv venv` to create an environment, or pass `--system` to "
            "install into a non-virtual environment\n");
  EXPECT_NE(uv_says.err.find("error: No virtual environment found; run `uv venv` to create an environment, or pass "
                             "`--system` to install into a non-virtual environment"),
            std::string::npos)
      << uv_says.err;

  Venv venv = uv_venv("proj", {});
  CommandResult target = envdoctor_uv("", "install", "--target " + quote(tmp_ / "t") + " leaf", tmp_ / "proj");
  EXPECT_EQ(target.status, 2) << target.err;
  EXPECT_NE(target.err.find("uv's --target " + (tmp_ / "t") + " installs into another directory"), std::string::npos)
      << target.err;
  EXPECT_FALSE(fs::exists(tmp_ / "t"));

  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");
  CommandResult missing = envdoctor_uv("", "install", "nosuchproject" + index, tmp_ / "proj");
  CommandResult referee = uv("pip install --dry-run nosuchproject" + index, tmp_ / "proj");
  EXPECT_NE(referee.status, 0);
  EXPECT_EQ(missing.status, referee.status) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("Cannot check this change, so nothing was installed."), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("nosuchproject was not found in the provided package locations"), std::string::npos)
      << missing.out;

  CommandResult unread = envdoctor_uv("", "uninstall", "-r nofile.txt", tmp_ / "proj");
  CommandResult uv_unread = uv("pip uninstall -r nofile.txt", tmp_ / "proj");
  EXPECT_EQ(unread.status, uv_unread.status) << unread.out << unread.err;
  ASSERT_EQ(lines_starting(uv_unread.err, "error: ").size(), 1u) << uv_unread.err;
  EXPECT_NE(unread.out.find(lines_starting(uv_unread.err, "error: ")[0]), std::string::npos) << unread.out;
  EXPECT_NE(unread.out.find("Cannot check this change, so nothing was uninstalled."), std::string::npos) << unread.out;

  CommandResult no_uv = envdoctor_uv("", "uninstall", "leaf", tmp_ / "proj", "PATH=/usr/bin:/bin");
  EXPECT_EQ(no_uv.status, 2);
  EXPECT_NE(no_uv.err.find("uv is not on PATH"), std::string::npos) << no_uv.err;
  EXPECT_EQ(run("ls " + quote(venv.site()) + " | grep -c dist-info").out, "0\n") << "nothing installed";
}

// The environment envdoctor examines is the one uv changes. The referee is uv's own install of a
// marker package, the user's command that envdoctor runs with the same arguments, variables and
// directory: the environment the marker lands in is the one envdoctor must have named. uv's discovery is more than its
// documented order: `-p 3.X` takes a virtual environment that satisfies it before any interpreter of that name, and a
// virtual environment's interpreter first on PATH is taken when nothing else is.
TEST_F(UvTest, TheEnvironmentIsTheOneUvChanges) {
  pure_wheel("marker", "1.0");
  Venv proj = uv_venv("disc/proj", {});
  Venv other = uv_venv("disc/other", {});
  fs::create_directories(tmp_ / "disc/proj/a/b");
  std::string minor =
      run(quote(python3_executable()) + " -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").out;
  minor.pop_back();
  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");
  struct Case {
    std::string dir, variables, args;
  };
  const std::vector<Case> cases = {
      {"disc/proj", "", ""},
      {"disc/proj/a/b", "", ""},
      {"disc/proj/a/b", "VIRTUAL_ENV=" + other.dir(), ""},
      {"disc/proj/a/b", "CONDA_PREFIX=" + other.dir(), ""},
      {"disc/proj/a/b", "UV_PYTHON=" + other.dir(), ""},
      {"disc/proj/a/b", "", "-p " + quote(other.dir())},
      {"disc/proj/a/b", "", "--python=" + quote(other.python())},
      {"disc/proj/a/b", "", "-p " + minor},
      {"disc", "", "--directory proj"},
      {"", "PATH=" + quote(other.dir() + "/bin:" + path_), ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("in " + c.dir + " with " + c.variables + " " + c.args);
    int status = -1;
    std::string err;
    json doc = envdoctor_uv_json("install", c.args + " marker" + index, tmp_ / c.dir, &status, &err, c.variables);
    ASSERT_EQ(status, 0) << err;
    std::string changed;
    for (const Venv* v : {&proj, &other})
      if (fs::exists(v->site() + "/marker/__init__.py")) changed = v->dir();
    EXPECT_EQ(fs::path(doc["prediction"]["environment"]["python"].get<std::string>()).parent_path().parent_path(),
              fs::path(changed));
    for (const Venv* v : {&proj, &other}) v->uninstall("marker");
  }
  // No environment: uv's words, for a request too.
  for (const std::string& args : {std::string(), std::string("-p 3.2")}) {
    CommandResult none = envdoctor_uv("", "install", args + " marker" + index, "/");
    CommandResult real = uv("pip install " + args + " marker" + index, "/");
    EXPECT_EQ(none.status, 2) << none.err;
    std::vector<std::string> said = lines_starting(real.err, "error: ");
    ASSERT_EQ(said.size(), 1u) << real.err;
    EXPECT_EQ(none.err, "envdoctor: " + said[0].substr(7) + "\n");
  }
}

// A distribution laid out by `uv pip install --target DIR --no-deps` is read as its wheel is: every
// file the wheel installs goes to the same place in a scheme (python/laid_out.h against
// python/wheel.h, the referee), and what the layout adds is the installer's own record (INSTALLER,
// REQUESTED, uv_cache.json, bytecode), nothing else.
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
  for (const auto& [file, dest] : laid_out->install_plan(scheme))
    if (!installers_own(dest) && dest.string().find("/__pycache__/") == std::string::npos)
      from_dir.insert(dest.string());
  EXPECT_EQ(from_dir, from_wheel);
  EXPECT_TRUE(from_dir.count("/s/plat/leaf_ext/lib/libleaf.so")) << "a platlib wheel goes to platlib";
  python::Distribution installed = laid_out->as_installed(scheme);
  EXPECT_EQ(installed.metadata_dir, "/s/plat/Leaf_Ext-2.0.dist-info");
  EXPECT_EQ(installed.installer, "uv");
  EXPECT_FALSE(python::LaidOutDistribution::open(tmp_ / "wheels", &error));
  EXPECT_EQ(error, (tmp_ / "wheels") + " holds no .dist-info directory");
}

// The dry run's lines, read from the real uv in every shape its plan takes (an install with a
// dependency, an upgrade, a reinstall, a direct wheel file, --exact's removal, no change), agree
// with uv's own JSON of the same run (`--output-format json`: name, version, installed or
// uninstalled); a direct reference's line names its file instead of its version. An uninstall's
// dry run names what uv then removes.
TEST_F(UvTest, DryRunLinesAgreeWithUvsOwnJson) {
  pure_wheel("leaf", "1.0");
  std::string leaf2 = pure_wheel("leaf", "2.0");
  pure_wheel("extra", "1.0");
  wheel({{"name", "top"}, {"version", "1.0"}, {"files", {{"top/__init__.py", ""}}}, {"requires", {"leaf"}}});
  Venv venv = uv_venv("proj", {});
  const std::string index = " --no-index --find-links " + quote(tmp_ / "wheels");
  ASSERT_EQ(uv("pip install leaf==1.0 extra" + index, tmp_ / "proj").status, 0);
  const std::vector<std::string> cases = {"top",        "top leaf==2.0",     "--reinstall leaf==1.0",
                                          quote(leaf2), "--exact leaf==1.0", "leaf==1.0"};
  for (const std::string& args : cases) {
    SCOPED_TRACE(args);
    CommandResult r = uv("pip install --dry-run --output-format json --color never " + args + index, tmp_ / "proj");
    ASSERT_EQ(r.status, 0) << r.err;
    std::string error;
    std::optional<python::UvDryRun> plan = python::parse_uv_dry_run(r.err, &error);
    ASSERT_TRUE(plan) << error << r.err;
    std::multiset<std::string> text, from_json;
    for (const python::UvPlanLine& line : plan->lines) {
      std::string version = line.version;
      if (version.empty()) {
        EXPECT_EQ(line.url, python::file_url(leaf2));
        version = "2.0";  // the file's
      }
      text.insert(std::string(1, line.change) + line.name + "==" + version);
    }
    json doc = json::parse(r.out);
    ASSERT_EQ(doc["schema"]["version"], "preview") << "uv changed its JSON: read it again";
    for (const json& change : doc["changes"])
      from_json.insert(std::string(change["action"] == "installed" ? "+" : "-") + change["name"].get<std::string>() +
                       "==" + change["version"].get<std::string>());
    EXPECT_EQ(text, from_json) << r.err << r.out;
    EXPECT_EQ(plan->no_changes, doc["changes"].empty());
  }

  CommandResult dry = uv("pip uninstall --dry-run --color never Leaf extra", tmp_ / "proj");
  std::string error;
  std::optional<python::UvDryRun> plan = python::parse_uv_dry_run(dry.err, &error);
  ASSERT_TRUE(plan) << error << dry.err;
  CommandResult real = uv("pip uninstall --color never Leaf extra", tmp_ / "proj");
  std::vector<std::string> planned;
  for (const python::UvPlanLine& line : plan->lines) planned.push_back(" - " + line.name + "==" + line.version);
  EXPECT_EQ(planned, lines_starting(real.err, " - ")) << real.err;
  EXPECT_EQ(planned.size(), 2u);
  EXPECT_FALSE(python::parse_uv_dry_run(real.err, &error)) << "a real run's summary is no plan";
}

}  // namespace
}  // namespace envdoctor::test
