// `envdoctor mcp` against real MCP clients.
//
// The official MCP Python SDK (mcp, pinned with jsonschema by tests/requirements/tools.txt and
// installed by scripts/install-test-tools.sh into the tests' venv, fixtures/referees.h; the tests
// skip where it is not installed) connects over stdio, negotiates, lists the tools and calls each
// on real environments: venvs made with `python3 -m venv`, wheels built here, the real pip. The
// SDK validates every structuredContent against its tool's outputSchema (jsonschema), and
// tests/fixtures/mcp_client/drive.py again with jsonschema's Draft202012Validator. Every prediction is then
// held to the referee: pip makes the change itself and the import fails with the predicted words.
//
// The protocol's edges are driven from here with raw lines on the server's stdin (a malformed
// line, an unknown method, missing arguments, a cancelled call, stdin closed mid-call), each
// answer awaited for a bounded time, every line of stdout read as a JSON-RPC message.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "checks/finding.h"
#include "fixtures/referees.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < n; i++) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", digest[i]);
    hex += b;
  }
  return hex;
}

// Every file and link below `dir` with the sha256 of its bytes (a link: of its target's name),
// by relative path: "nothing changed" means this map is the same before and after.
std::map<std::string, std::string> hash_tree(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_symlink()) out[rel] = "link " + fs::read_symlink(e.path()).string();
    else if (e.is_regular_file()) out[rel] = sha256_hex(read_file(e.path().string()));
  }
  return out;
}

// ---- the SDK client ----

// The client: the official MCP Python SDK's ClientSession over its stdio transport.
const std::string kDrive = std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/mcp_client/drive.py";

struct Call {
  std::string name;
  json arguments;
  std::string shell;  // instead of a tool: a command run between two calls (drive.py)
};

class McpClientTest : public VenvTest {
 protected:
  void SetUp() override {
    VenvTest::SetUp();
    if (IsSkipped()) return;
    std::string why;
    python_ = pinned_tool("python", &why);
    if (python_.empty()) GTEST_SKIP() << why;
  }

  // One client session: connect, list the tools, make `calls` in order, close. The result file
  // of drive.py; a call's "result" is the CallToolResult as the wire spells it.
  json drive(const std::vector<Call>& calls) {
    json plan = {{"command", envdoctor()}, {"args", {"mcp"}}, {"calls", json::array()}};
    for (const Call& c : calls)
      plan["calls"].push_back(c.shell.empty() ? json{{"name", c.name}, {"arguments", c.arguments}}
                                              : json{{"shell", c.shell}});
    plan["env"] = {{"XDG_CACHE_HOME", tmp_ / "cache"}};
    std::string plan_file = tmp_.write("plan.json", plan.dump());
    std::string result_file = tmp_ / "result.json";
    fs::remove(result_file);
    CommandResult r =
        run("timeout 120 " + quote(python_) + " " + quote(kDrive) + " " + quote(plan_file) + " " + quote(result_file));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    json result = json::parse(read_file(result_file), nullptr, false);
    EXPECT_FALSE(result.is_discarded()) << r.err;
    if (result.is_discarded()) return json::object();
    // Every call answered, validated by the SDK (it raises on a structuredContent that does not
    // hold to the outputSchema) and by jsonschema's Draft202012Validator.
    for (const json& c : result["calls"]) {
      EXPECT_FALSE(c.contains("error")) << c["name"] << ": " << c.value("error", "");
      EXPECT_FALSE(c.contains("schemaErrors")) << c["name"] << ": " << c.value("schemaErrors", "");
    }
    return result;
  }

  // The structuredContent of call `i`, which must have succeeded.
  static json structured(const json& result, size_t i) {
    const json& r = result["calls"][i].value("result", json::object());
    EXPECT_EQ(r.value("isError", false), false) << r.dump(1);
    return r.value("structuredContent", json::object());
  }
  static std::string text(const json& result, size_t i) {
    json content = result["calls"][i].value("result", json::object()).value("content", json::array());
    return content.empty() ? "" : content[0].value("text", "");
  }

  std::string python_;  // the tests' venv's, where the SDK is installed
};

TEST_F(McpClientTest, ListsEveryToolWithItsSchemasAndAnnotationsThatTellTheTruth) {
  json result = drive({});
  EXPECT_EQ(result["protocolVersion"], "2025-11-25");
  EXPECT_EQ(result["serverVersion"]["name"], "envdoctor");
  EXPECT_TRUE(result["capabilities"].contains("tools")) << result["capabilities"];
  EXPECT_NE(result["instructions"].get<std::string>().find("predict_uninstall"), std::string::npos);
  std::map<std::string, json> tools;
  for (const json& t : result["tools"]) tools[t["name"]] = t;
  std::vector<std::string> names;
  for (const auto& [name, t] : tools) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"check_environment", "cuda_summary", "explain", "guarded_pip", "inspect_library",
                                      "predict_install", "predict_uninstall", "process", "why"}));
  for (const auto& [name, t] : tools) {
    SCOPED_TRACE(name);
    EXPECT_EQ(t["inputSchema"]["type"], "object");
    EXPECT_EQ(t["outputSchema"]["type"], "object");
    EXPECT_GT(t["description"].get<std::string>().size(), 100u);
    // Only guarded_pip changes anything.
    bool changes = name == "guarded_pip";
    EXPECT_EQ(t["annotations"]["readOnlyHint"], !changes);
    EXPECT_EQ(t["annotations"]["destructiveHint"], changes);
  }
  // The output schemas are the command line's --json schemas (data/schemas/).
  json check = json::parse(read_file(schema_path("check")));
  EXPECT_EQ(tools["check_environment"]["outputSchema"]["properties"], check["properties"]);
  EXPECT_EQ(tools["predict_uninstall"]["outputSchema"]["$defs"]["finding"], check["$defs"]["finding"]);
}

// The first incident, through the client: fake-cudnn-cu12 and -cu13 both installed
// libfakecudnn.so.9, which faketorch needs. predict_uninstall(["fake-cudnn-cu13"]) names the new
// missing-library error and its fix; guarded_pip refuses that uninstall and not one file changes;
// then pip alone makes it, and the import fails with the predicted words.
TEST_F(McpClientTest, UninstallOfTheCudnnOwnerIsPredictedAndGuardedPipRefusesIt) {
  auto venv = venv_with_pip();
  venv->install(two_owners_wheels());
  std::string ext = venv->site() + "/faketorch/_C" + suffix_;
  std::string lib = venv->site() + "/fakenv/cudnn/lib/libfakecudnn.so.9";
  std::map<std::string, std::string> before = hash_tree(tmp_ / "v");
  json py = venv->python();
  json result = drive({{"check_environment", {{"python", py}}},
                       {"predict_uninstall", {{"python", py}, {"packages", {"fake-cudnn-cu13"}}}},
                       {"guarded_pip", {{"python", py}, {"action", "uninstall"}, {"args", {"fake-cudnn-cu13"}}}},
                       {"why", {{"python", py}, {"name", "libfakecudnn.so.9"}}},
                       {"inspect_library", {{"python", py}, {"files", {ext}}}},
                       {"cuda_summary", {{"python", py}}},
                       {"explain", {{"codes", {"missing-library"}}}},
                       {"process", {{"pid", ::getpid()}}}});
  ASSERT_EQ(result["calls"].size(), 8u) << result.dump(1);

  json now = structured(result, 0);
  EXPECT_EQ(now["summary"]["errors"], 0) << now.dump(1);
  ASSERT_EQ(findings(now, "file-owned-twice").size(), 1u) << now.dump(1);

  json predicted = structured(result, 1);
  EXPECT_GE(predicted["change"]["new_errors"].get<int>(), 1) << predicted.dump(1);
  std::vector<json> missing;
  for (const json& f : new_findings(predicted))
    if (f["code"] == "missing-library" && f["package"] == "faketorch") missing.push_back(f);
  ASSERT_EQ(missing.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(missing[0]["file"], ext);
  EXPECT_EQ(missing[0]["library"], "libfakecudnn.so.9");
  EXPECT_EQ(missing[0]["message"], "libfakecudnn.so.9: cannot open shared object file: No such file or directory");
  // The fix: reinstall the owner that still lists the file, from the wheel it came from.
  EXPECT_NE(missing[0]["hint"].get<std::string>().find("fake-cudnn-cu12 lists fakenv/cudnn/lib/libfakecudnn.so.9"),
            std::string::npos)
      << missing[0];
  EXPECT_EQ(missing[0]["fix_command"], venv->python() + " -m pip install --force-reinstall --no-deps " +
                                           (tmp_ / "wheels/fake_cudnn_cu12-9.1-py3-none-manylinux_2_17_x86_64.whl"));
  EXPECT_NE(text(result, 1).find("what if:"), std::string::npos) << text(result, 1);

  json guarded = structured(result, 2);
  EXPECT_EQ(guarded["pip"]["verdict"], "refused") << guarded.dump(1);
  EXPECT_EQ(guarded["ran"], false);
  EXPECT_EQ(guarded["exit_status"], 1);
  EXPECT_NE(text(result, 2).find("Refused: this change would introduce"), std::string::npos) << text(result, 2);
  EXPECT_EQ(hash_tree(tmp_ / "v"), before) << "guarded_pip changed the environment";
  EXPECT_EQ(venv->import("faketorch._C"), "");

  json why = structured(result, 3);
  ASSERT_TRUE(why["library"].is_object()) << why.dump(1);
  ASSERT_EQ(why["library"]["copies"].size(), 1u) << why.dump(1);
  EXPECT_EQ(why["library"]["copies"][0]["path"], lib);
  ASSERT_EQ(why["library"]["needed_by"].size(), 1u) << why.dump(1);
  EXPECT_EQ(why["library"]["needed_by"][0]["consumer"]["path"], ext);
  EXPECT_EQ(why["library"]["needed_by"][0]["edge"]["resolved"], lib);

  json inspected = structured(result, 4);
  ASSERT_EQ(inspected["files"].size(), 1u);
  EXPECT_EQ(inspected["files"][0]["failed"], false) << inspected.dump(1);
  // Found through the extension's RUNPATH $ORIGIN/../fakenv/cudnn/lib, spelled as the loader opens it.
  std::string opened = venv->site() + "/faketorch/../fakenv/cudnn/lib/libfakecudnn.so.9";
  bool found = false;
  for (const json& l : inspected["files"][0]["libraries"]) found |= l["path"] == opened && l["rule"] == "RUNPATH";
  EXPECT_TRUE(found) << inspected.dump(1);
  EXPECT_NE(inspected["files"][0]["ldd"].get<std::string>().find("libfakecudnn.so.9 => " + opened), std::string::npos);

  EXPECT_EQ(structured(result, 5)["schema"], 1);
  json explained = structured(result, 6);
  ASSERT_EQ(explained["codes"].size(), 1u);
  EXPECT_TRUE(explained["codes"][0]["text"].get<std::string>().starts_with("## missing-library")) << explained;
  EXPECT_EQ(structured(result, 7)["process"]["pid"], ::getpid());

  // The referee: pip makes the change itself; the import fails as predicted, and a check of the
  // environment it leaves finds what the prediction said.
  venv->uninstall("fake-cudnn-cu13");
  EXPECT_EQ(venv->import("faketorch._C"), missing[0]["message"].get<std::string>());
  EXPECT_EQ(plain(venv->check()), plain(predicted));
}

// A harmless install: predict_install through the environment's own pip says safe without
// installing anything, and guarded_pip then lets pip install it.
TEST_F(McpClientTest, GuardedPipLetsAHarmlessInstallThrough) {
  make_wheel(tmp_ / "wheels", {{"name", "leaf"}, {"version", "1.0"}, {"files", {{"leaf/__init__.py", "v = 1\n"}}}});
  auto venv = venv_with_pip();
  json py = venv->python();
  json args = {"--no-index", "--find-links", tmp_ / "wheels", "--disable-pip-version-check", "leaf"};
  auto installed = [&] { return run(quote(venv->python()) + " -m pip show -q leaf").status == 0; };
  json result = drive({{"predict_install", {{"python", py}, {"requirements", args}}}});
  json plan = structured(result, 0);
  EXPECT_EQ(plan["verdict"], "safe") << plan.dump(1);
  ASSERT_EQ(plan["plan"]["install"].size(), 1u) << plan.dump(1);
  EXPECT_EQ(plan["plan"]["install"][0]["name"], "leaf");
  EXPECT_NE(text(result, 0).find("No new errors: this change is safe to make."), std::string::npos) << text(result, 0);
  EXPECT_FALSE(installed()) << "predict_install installed something";

  result = drive({{"guarded_pip", {{"python", py}, {"action", "install"}, {"args", args}}}});
  json guarded = structured(result, 0);
  EXPECT_EQ(guarded["pip"]["verdict"], "safe") << guarded.dump(1);
  EXPECT_EQ(guarded["ran"], true);
  EXPECT_EQ(guarded["exit_status"], 0) << guarded["output"];
  EXPECT_NE(guarded["output"].get<std::string>().find("Successfully installed leaf-1.0"), std::string::npos)
      << guarded["output"];
  EXPECT_TRUE(installed());
  EXPECT_EQ(venv->import("leaf"), "");
}

// guarded_pip is `envdoctor pip` (scenarios/commands.h's run_installer): after an install from
// --no-index --find-links DIR it records where the package was found, so that the fix of a file
// the package later loses reinstalls it from DIR, and pasted into a bare shell repairs the
// environment offline (as PipTest.FixReinstallsOfflineFromTheLinksEnvdoctorPipWasGiven holds for
// the command line). Before issue 51 the server's copy of pip never recorded it, and the fix
// asked the index.
TEST_F(McpClientTest, GuardedPipRecordsWhereItsInstallCameFromForAnOfflineFix) {
  ::setenv("XDG_STATE_HOME", (tmp_ / "state").c_str(), 1);  // this test's own records
  std::string lib = tmp_ / "build/libprov.so.1";
  build_shared(lib, "int prov(void) { return 1; }", "-Wl,-soname,libprov.so.1", tmp_);
  platlib_wheel("provlib", "2.0", {{"provlib/libprov.so.1", lib}}, {{"provlib/__init__.py", ""}});
  auto venv = venv_with_pip();
  json args = {"--no-index", "--find-links", tmp_ / "wheels", "--disable-pip-version-check", "provlib==2.0"};
  json result = drive({{"guarded_pip", {{"python", venv->python()}, {"action", "install"}, {"args", args}}}});
  json guarded = structured(result, 0);
  ASSERT_EQ(guarded["ran"], true) << guarded.dump(1);
  ASSERT_EQ(guarded["exit_status"], 0) << guarded["output"];
  EXPECT_EQ(text(result, 0).find("envdoctor: "), std::string::npos) << text(result, 0);
  fs::remove(venv->site() + "/provlib/libprov.so.1");

  json report = venv->check();
  std::string fix;
  for (const json& f : report["findings"])
    if (f["code"] == "record-missing-file" && f["package"] == "provlib") fix = f["fix_command"];
  EXPECT_EQ(fix, venv->python() + " -m pip install --force-reinstall --no-deps --no-index --find-links " +
                     (tmp_ / "wheels") + " provlib==2.0")
      << report.dump(1);
  // The referee: the fix, pasted into a bare shell, reinstalls the file offline.
  CommandResult fixed = run("cd / && env -i /bin/bash -c " + quote(fix));
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_TRUE(fs::exists(venv->site() + "/provlib/libprov.so.1"));
  EXPECT_EQ(venv->import("provlib"), "");
}

// The second incident: an extension linked against libcudart.so.12 installed into an environment
// whose CUDA runtime is 13. predict_install of the wheel names the libcudart.so.12 error; guarded_pip
// refuses it; pip alone installs it and the import fails with the predicted words.
TEST_F(McpClientTest, InstallOfACuda12ExtensionIntoACuda13EnvironmentIsPredictedAndRefused) {
  auto [runtime, conv] = cuda12_extension_wheels();
  auto venv = venv_with_pip();
  venv->install({runtime});
  json py = venv->python();
  std::map<std::string, std::string> before = hash_tree(tmp_ / "v");
  json result =
      drive({{"predict_install", {{"python", py}, {"wheels", {conv}}}},
             {"guarded_pip",
              {{"python", py}, {"action", "install"}, {"args", {"--no-index", "--disable-pip-version-check", conv}}}},
             {"cuda_summary", {{"python", py}, {"driver", "580.65.06"}, {"gpus", {"sm_90"}}}}});
  json predicted = structured(result, 0);
  std::vector<json> fresh = new_findings(predicted);
  ASSERT_EQ(fresh.size(), 1u) << predicted.dump(1);
  EXPECT_EQ(fresh[0]["code"], "missing-library");
  EXPECT_EQ(fresh[0]["library"], "libcudart.so.12");
  EXPECT_EQ(fresh[0]["package"], "causal-conv1d");
  EXPECT_EQ(predicted["change"]["new_errors"], 1);

  json guarded = structured(result, 1);
  EXPECT_EQ(guarded["pip"]["verdict"], "refused") << guarded.dump(1);
  EXPECT_EQ(guarded["ran"], false);
  EXPECT_EQ(hash_tree(tmp_ / "v"), before) << "guarded_pip changed the environment";

  // cuda_summary names the runtime and its package (the rows point into what the summary keeps).
  json cuda = structured(result, 2);
  ASSERT_EQ(cuda["runtimes"].size(), 1u) << cuda.dump(1);
  EXPECT_EQ(cuda["runtimes"][0]["soname"], "libcudart.so.13");
  EXPECT_EQ(cuda["runtimes"][0]["package"], "nvidia-cuda-runtime");

  venv->install({conv});
  EXPECT_EQ(venv->import("causal_conv1d._cc"), fresh[0]["message"].get<std::string>());
}

// The server answers a question again from its index, held in memory, while the environment is
// unchanged, and from a fresh run once a library is replaced under it: the answer that run gives
// is the real import's.
TEST_F(McpClientTest, TheIndexAnswersAgainUntilALibraryIsReplacedUnderTheServer) {
  Venv venv(tmp_, "indexed");
  std::string pkg = venv.site() + "/pkg";
  build_shared(pkg + "/libs/libdep.so", "int dep_value(void) { return 7; }", "-Wl,-soname,libdep.so", tmp_);
  build_shared(tmp_ / "bad.so", "int other_value(void) { return 8; }", "-Wl,-soname,libdep.so", tmp_);
  build_shared(pkg + "/ext" + suffix_, extension_source("ext", "int dep_value(void);", "dep_value()"),
               "-I" + include_ + " -L" + pkg + "/libs -ldep -Wl,-rpath,'$ORIGIN/libs'", tmp_);
  tmp_.write(fs::relative(pkg, tmp_.path()).string() + "/__init__.py", "");
  json args = {{"python", venv.python()}, {"gpus", {"sm_90"}}, {"driver", "580.65.06"}};
  json result = drive({{"", {}, "sleep 1.1"},  // an input changed within a second is not trusted
                       {"check_environment", args},
                       {"check_environment", args},
                       {"",
                        {},
                        "cp " + quote(tmp_ / "bad.so") + " " + quote(pkg + "/libs/.new") + " && mv " +
                            quote(pkg + "/libs/.new") + " " + quote(pkg + "/libs/libdep.so")},
                       {"check_environment", args}});
  ASSERT_EQ(result["calls"].size(), 5u);
  json first = structured(result, 1), again = structured(result, 2), after = structured(result, 4);
  EXPECT_EQ(again, first);
  EXPECT_EQ(first["summary"]["errors"], 0) << first.dump(1);
  EXPECT_EQ(venv.import("pkg.ext").find("undefined symbol: dep_value") != std::string::npos, true);
  EXPECT_EQ(after["summary"]["errors"], 1) << after.dump(1);
  EXPECT_NE(text(result, 4).find("undefined symbol: dep_value"), std::string::npos) << text(result, 4);
  EXPECT_FALSE(fs::is_empty(tmp_ / "cache/envdoctor/index-v1")) << "nothing kept";
}

// Domain failures are results with isError and the command line's sentence, never a protocol
// error, and the session goes on.
TEST_F(McpClientTest, DomainFailuresAreToolErrorsInTheCommandLinesWords) {
  std::string absent = tmp_ / "absent/bin/python";
  json result = drive({{"check_environment", {{"python", absent}}},
                       {"predict_install", {{"python", "python3"}, {"wheels", {tmp_ / "no-such.whl"}}}},
                       {"explain", {{"codes", {"missing-librar"}}}},
                       {"explain", json::object()}});
  ASSERT_EQ(result["calls"].size(), 4u);
  CommandResult cli = run(quote(envdoctor()) + " check --python " + quote(absent));
  EXPECT_EQ(cli.status, 2);
  const json& failed = result["calls"][0]["result"];
  EXPECT_EQ(failed["isError"], true);
  EXPECT_EQ(failed["content"][0]["text"].get<std::string>() + "\n", cli.err);
  EXPECT_EQ(result["calls"][1]["result"]["isError"], true);
  EXPECT_NE(text(result, 1).find("no-such.whl"), std::string::npos) << text(result, 1);
  EXPECT_EQ(result["calls"][2]["result"]["isError"], true);
  EXPECT_EQ(text(result, 2),
            "envdoctor: no finding code 'missing-librar'; did you mean missing-library? (`envdoctor explain` lists "
            "them all)");
  // With no codes: every code, one line each.
  EXPECT_EQ(structured(result, 3)["codes"].size(), std::size(checks::kAllCodes));
}

// ---- raw lines ----

// `envdoctor mcp` with pipes on its stdin and stdout (stderr is the test's). Every line it
// writes must be a JSON-RPC message; each wait is bounded.
class RawServer {
 public:
  RawServer() {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      std::string binary = envdoctor();
      ::execl(binary.c_str(), binary.c_str(), "mcp", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~RawServer() {
    close_input();
    if (pid_ > 0 && wait(std::chrono::seconds(10)) < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (from_ >= 0) ::close(from_);
  }

  void send_bytes(const std::string& text) {
    ASSERT_EQ(::write(to_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void send(const std::string& line) { send_bytes(line + "\n"); }
  void send_message(const json& message) { send(message.dump()); }
  void request(int id, const std::string& method, json params = json::object()) {
    send_message(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  }
  // initialize (asking for `version`), then notifications/initialized; the negotiated version.
  std::string initialize(const std::string& version = "2025-11-25") {
    request(0, "initialize",
            {{"protocolVersion", version},
             {"capabilities", json::object()},
             {"clientInfo", {{"name", "raw"}, {"version", "1"}}}});
    std::optional<json> answer = next(std::chrono::seconds(10));
    send_message(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return answer ? (*answer)["result"].value("protocolVersion", "") : "";
  }

  // The next message, or nullopt when none comes within `limit` (or stdout ends).
  std::optional<json> next(std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    for (;;) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json m = json::parse(line, nullptr, false);
        EXPECT_TRUE(m.is_object() && m["jsonrpc"] == "2.0") << "not a JSON-RPC message on stdout: " << line;
        return m;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{from_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[65536];
      ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  void close_input() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }
  // Its exit status, or -1 when it has not exited within `limit`.
  int wait(std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int raw = 0;
      pid_t done = ::waitpid(pid_, &raw, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
      }
      ::usleep(10000);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

constexpr std::chrono::seconds kAnswer{10};

int error_code(const std::optional<json>& m) {
  return m && m->contains("error") ? (*m)["error"]["code"].get<int>() : 0;
}

TEST(McpProtocol, AMalformedLineIsAParseErrorAndTheServerGoesOn) {
  RawServer server;
  EXPECT_EQ(server.initialize(), "2025-11-25");
  server.send("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
  std::optional<json> m = server.next(kAnswer);
  EXPECT_EQ(error_code(m), -32700) << (m ? m->dump() : "no answer");
  EXPECT_TRUE(m && (*m)["id"].is_null());
  server.request(2, "ping");
  m = server.next(kAnswer);
  ASSERT_TRUE(m) << "no answer to ping after a malformed line";
  EXPECT_EQ((*m)["id"], 2);
  EXPECT_EQ((*m)["result"], json::object());
  server.close_input();
  EXPECT_EQ(server.wait(kAnswer), 0);
}

TEST(McpProtocol, AnUnknownMethodIsMethodNotFoundAndNotificationsAreNeverAnswered) {
  RawServer server;
  server.initialize();
  server.send_message(json{{"jsonrpc", "2.0"}, {"method", "notifications/no-such-thing"}});
  server.request(3, "resources/list");
  std::optional<json> m = server.next(kAnswer);
  EXPECT_EQ(error_code(m), -32601) << (m ? m->dump() : "no answer");
  EXPECT_EQ((*m)["id"], 3);
}

TEST(McpProtocol, BatchesAndBadEnvelopesAreInvalidRequests) {
  RawServer server;
  server.initialize();
  for (const char* line :
       {R"([{"jsonrpc": "2.0", "id": 4, "method": "ping"}])", R"({"jsonrpc": "1.0", "id": 5, "method": "ping"})",
        R"({"jsonrpc": "2.0", "id": 6})", R"({"jsonrpc": "2.0", "id": null, "method": "ping"})", "42"}) {
    SCOPED_TRACE(line);
    server.send(std::string(line));
    std::optional<json> m = server.next(kAnswer);
    EXPECT_EQ(error_code(m), -32600) << (m ? m->dump() : "no answer");
  }
}

// The client's version when we speak it, else our latest (basic/lifecycle, version negotiation).
TEST(McpProtocol, TheProtocolVersionIsNegotiated) {
  for (const auto& [asked, answered] : std::vector<std::pair<std::string, std::string>>{
           {"2025-06-18", "2025-06-18"}, {"2024-11-05", "2024-11-05"}, {"2099-01-01", "2025-11-25"}}) {
    RawServer server;
    EXPECT_EQ(server.initialize(asked), answered) << asked;
  }
}

// From 2025-11-25 an argument that fails the inputSchema is a tool error the model can read
// (SEP-1303); before, it is -32602. An unknown tool or a call without a name is -32602 in both.
TEST(McpProtocol, MissingArgumentsAreAToolErrorFrom2025_11_25AndInvalidParamsBefore) {
  {
    RawServer server;
    server.initialize("2025-11-25");
    server.request(7, "tools/call", {{"name", "why"}, {"arguments", json::object()}});
    std::optional<json> m = server.next(kAnswer);
    ASSERT_TRUE(m && m->contains("result")) << (m ? m->dump() : "no answer");
    EXPECT_EQ((*m)["result"]["isError"], true);
    EXPECT_EQ((*m)["result"]["content"][0]["text"], "why: missing required argument \"name\"");
    server.request(8, "tools/call", {{"name", "predict_uninstall"}, {"arguments", {{"packages", "torch"}}}});
    m = server.next(kAnswer);
    ASSERT_TRUE(m && m->contains("result")) << (m ? m->dump() : "no answer");
    EXPECT_EQ((*m)["result"]["content"][0]["text"], "predict_uninstall: argument \"packages\" must be an array");
    server.request(9, "tools/call", {{"name", "no_such_tool"}});
    EXPECT_EQ(error_code(server.next(kAnswer)), -32602);
    server.request(10, "tools/call", {{"arguments", json::object()}});
    EXPECT_EQ(error_code(server.next(kAnswer)), -32602);
  }
  RawServer server;
  server.initialize("2025-06-18");
  server.request(11, "tools/call", {{"name", "why"}, {"arguments", {{"nmae", "libc.so.6"}}}});
  std::optional<json> m = server.next(kAnswer);
  EXPECT_EQ(error_code(m), -32602) << (m ? m->dump() : "no answer");
  EXPECT_EQ((*m)["error"]["message"], "Invalid params: why: unknown argument \"nmae\"");
}

// A venv's interpreter behind a script that takes `seconds` to start it: a call that examines its
// environment (a small one) lasts a little longer than that.
std::string slow_python(const TempDir& tmp, int seconds) {
  Venv venv(tmp, "venv");
  std::string path = tmp.write(
      "slow-python", "#!/bin/sh\nsleep " + std::to_string(seconds) + "\nexec " + quote(venv.python()) + " \"$@\"\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// A cancelled call is never answered (basic/utilities/cancellation), and a long call holds up
// nothing: ping is answered while it runs.
TEST(McpProtocol, ACancelledCallIsNeverAnsweredAndALongCallHoldsUpNothing) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  RawServer server;
  server.initialize();
  server.request(20, "tools/call", {{"name", "check_environment"}, {"arguments", {{"python", slow_python(tmp, 2)}}}});
  server.send_message(json{{"jsonrpc", "2.0"},
                           {"method", "notifications/cancelled"},
                           {"params", {{"requestId", 20}, {"reason", "the user pressed stop"}}}});
  auto started = Clock::now();
  server.request(21, "ping");
  std::optional<json> m = server.next(kAnswer);
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["id"], 21);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(1)) << "ping waited for the call";
  // The call finishes a little after its 2 s; its answer must not come.
  m = server.next(std::chrono::seconds(4));
  EXPECT_FALSE(m) << m->dump();
  // An uncancelled one is answered.
  server.request(22, "tools/call", {{"name", "explain"}, {"arguments", {{"codes", {"missing-library"}}}}});
  m = server.next(kAnswer);
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["id"], 22);
  server.close_input();
  EXPECT_EQ(server.wait(kAnswer), 0);
}

// Calls run side by side: a short one asked after a long one is answered first. Then the client
// closes stdin while the long one runs (its shutdown, basic/lifecycle): that call finishes and
// answers, the server exits 0, and it does not hang.
TEST(McpProtocol, StdinClosedMidCallEndsTheServerCleanly) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  RawServer server;
  server.initialize();
  server.request(30, "tools/call", {{"name", "check_environment"}, {"arguments", {{"python", slow_python(tmp, 1)}}}});
  server.request(31, "tools/call", {{"name", "explain"}, {"arguments", json::object()}});
  std::optional<json> first = server.next(kAnswer);
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["id"], 31) << "the short call waited for the long one";
  server.close_input();
  auto started = Clock::now();
  EXPECT_EQ(server.wait(std::chrono::seconds(20)), 0);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(20));
  std::optional<json> m = server.next(std::chrono::seconds(1));
  ASSERT_TRUE(m) << "the running call was not answered";
  EXPECT_EQ((*m)["id"], 30);
}

// Calls run on threads of their own, side by side over one environment: each is answered once,
// and the same question gets the same answer whatever ran beside it.
TEST(McpProtocol, ConcurrentCallsAreEachAnsweredAndAgree) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  Venv venv(tmp, "venv");
  RawServer server;
  server.initialize();
  const std::vector<std::pair<std::string, json>> questions = {
      {"check_environment", {{"python", venv.python()}}},
      {"why", {{"python", venv.python()}, {"name", "libc.so.6"}}},
      {"cuda_summary", {{"python", venv.python()}}}};
  for (int i = 0; i < 9; i++)
    server.request(100 + i, "tools/call", {{"name", questions[i % 3].first}, {"arguments", questions[i % 3].second}});
  std::map<int, json> answers;
  for (int i = 0; i < 9; i++) {
    std::optional<json> m = server.next(std::chrono::seconds(60));
    ASSERT_TRUE(m) << "only " << answers.size() << " of 9 answered";
    EXPECT_TRUE(answers.emplace((*m)["id"].get<int>(), (*m)["result"]).second) << "answered twice: " << (*m)["id"];
  }
  for (int i = 3; i < 9; i++) {
    SCOPED_TRACE(questions[i % 3].first);
    EXPECT_EQ(answers[100 + i].value("isError", true), false) << answers[100 + i].dump();
    EXPECT_EQ(answers[100 + i]["structuredContent"], answers[100 + i % 3]["structuredContent"]);
  }
}

// A container image, asked of over MCP as --image asks it: check_environment, why and cuda_summary
// take `image`, and each answers exactly what the command line answers of it (one model).
TEST(McpProtocol, AnImageIsAskedAsTheCommandLineAsksIt) {
  if (!have_tool("python3")) GTEST_SKIP() << "needs python3";
  TempDir tmp;
  // A venv's shape, read without running anything (--prefix).
  json entries = json::array({{{"name", "opt/venv/pyvenv.cfg"}, {"data", "home = /usr/bin\nversion = 3.11.2\n"}},
                              {{"name", "opt/venv/lib/python3.11/site-packages"}, {"type", "dir"}}});
  json spec = {{"layers", json::array({{{"entries", entries}}})}};
  CommandResult made =
      run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/data/image/make_layout.py") + " " +
          quote(tmp / "layout") + " " + quote(spec.dump()));
  ASSERT_EQ(made.status, 0) << made.err;
  std::string ref = tmp / "layout:t";
  ::setenv("XDG_CACHE_HOME", (tmp / "cache").c_str(), 1);  // the server inherits it
  RawServer server;
  server.initialize();
  const std::vector<std::tuple<std::string, json, std::string>> questions = {
      {"check_environment", {{"image", ref}, {"prefix", "/opt/venv"}}, "check --json"},
      {"why", {{"image", ref}, {"prefix", "/opt/venv"}, {"name", "libc.so.6"}}, "why --json"},
      {"cuda_summary", {{"image", ref}, {"prefix", "/opt/venv"}}, "cuda --json"},
      // On a driver: the image as its GPU container starts (image/gpu_container.h), in both.
      {"check_environment",
       {{"image", ref}, {"prefix", "/opt/venv"}, {"driver", "580.65.06"}},
       "check --driver 580.65.06 --json"}};
  for (size_t i = 0; i < questions.size(); i++) {
    const auto& [tool, args, command] = questions[i];
    SCOPED_TRACE(tool);
    server.request(static_cast<int>(200 + i), "tools/call", {{"name", tool}, {"arguments", args}});
    std::optional<json> m = server.next(std::chrono::seconds(60));
    ASSERT_TRUE(m);
    std::string cli = quote(envdoctor()) + " " + command + " --image " + quote(ref) + " --prefix /opt/venv" +
                      (tool == "why" ? " libc.so.6" : "");
    CommandResult r = run(cli);
    if (tool == "why") {
      // This image has no C library: a domain failure, in the command line's words.
      EXPECT_EQ(r.status, 2);
      ASSERT_EQ((*m)["result"].value("isError", false), true) << m->dump();
      EXPECT_EQ((*m)["result"]["content"][0]["text"].get<std::string>() + "\n", r.err);
      continue;
    }
    ASSERT_EQ((*m)["result"].value("isError", true), false) << m->dump();
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    json answer = json::parse(r.out);
    EXPECT_EQ((*m)["result"]["structuredContent"], answer) << cli;
    if (tool == "check_environment") EXPECT_EQ(answer["environment"]["image"]["reference"], ref) << r.out;
    if (args.contains("driver")) {
      std::string note = "note: as a GPU container on driver 580.65.06, the NVIDIA container toolkit mounts";
      CommandResult text =
          run(quote(envdoctor()) + " check --driver 580.65.06 --image " + quote(ref) + " --prefix /opt/venv");
      EXPECT_NE(text.out.find(note), std::string::npos) << text.out;
      EXPECT_NE((*m)["result"]["content"][0]["text"].get<std::string>().find(note), std::string::npos) << m->dump();
    }
  }
  ::unsetenv("XDG_CACHE_HOME");
}

// stdin ends in the middle of a line: what came is a message like any other (here malformed:
// -32700), then the server exits.
TEST(McpProtocol, StdinEndingMidLineIsAnsweredThenTheServerExits) {
  RawServer server;
  server.initialize();
  server.send_bytes(R"({"jsonrpc": "2.0", "id": 40, "meth)");
  server.close_input();
  EXPECT_EQ(error_code(server.next(kAnswer)), -32700);
  EXPECT_EQ(server.wait(kAnswer), 0);
}

}  // namespace
}  // namespace envdoctor::test
