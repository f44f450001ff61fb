// envdoctor carried into Python environments: the wheel `make wheel` builds (its manylinux tag
// computed by `envdoctor wheel-tag`, held against `objdump -T`), installed with each
// interpreter's own pip into fresh venvs, run as bin/envdoctor and as `python -m envdoctor`,
// and removed again; and `make install`'s tree (cmake --install).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/fixture.h"
#include "fixtures/schema.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

std::string build_wheel_script() { return std::string(ENVDOCTOR_SOURCE_DIR) + "/packaging/build_wheel.py"; }

// The wheel as `make wheel` builds it, once per test process, into its own folder.
const std::string& built_wheel() {
  static TempDir dist;
  static std::string wheel = [] {
    CommandResult r = run("python3 " + quote(build_wheel_script()) + " --binary " + quote(envdoctor()) + " --out " +
                          quote(dist.path().string()));
    EXPECT_EQ(r.status, 0) << r.err;
    std::string path = r.out.substr(0, r.out.find('\n'));
    return path;
  }();
  return wheel;
}

struct GlibcNeed {
  int major = 0, minor = 0;
  std::set<std::string> versions;  // every version name at that release
};

// The highest GLIBC_2.N among the versions `objdump -T` prints beside a file's undefined symbols.
GlibcNeed objdump_glibc_need(const std::string& file) {
  CommandResult r = run("objdump -T " + quote(file));
  EXPECT_EQ(r.status, 0) << r.err;
  GlibcNeed need;
  std::regex version(R"(\(?(GLIBC_(\d+)\.(\d+)(\.\d+)?)\)?\s)");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (line.find("*UND*") == std::string::npos || !std::regex_search(line, m, version)) continue;
    int major = std::stoi(m[2]), minor = std::stoi(m[3]);
    if (std::tie(major, minor) > std::tie(need.major, need.minor)) need = {major, minor, {}};
    if (major == need.major && minor == need.minor) need.versions.insert(m[1]);
  }
  return need;
}

// `wheel-tag --json` of one file: its one line, held to the schema.
json wheel_tag_json(const std::string& file, int* status = nullptr) {
  CommandResult r = run(quote(envdoctor()) + " wheel-tag --json " + file);
  if (status) *status = r.status;
  EXPECT_NE(r.status, 2) << r.err;
  std::string line = r.out.substr(0, r.out.find('\n'));
  expect_schema_valid("wheel-tag", line);
  return json::parse(line.empty() ? "{}" : line);
}

TEST(Wheel, MakeWheelTagsItWithTheBinarysOwnTagAndItsRecordHolds) {
  const std::string& wheel = built_wheel();
  ASSERT_FALSE(wheel.empty());
  std::string tag = wheel_tag_json(quote(envdoctor()))["overall_tag"];
  EXPECT_EQ(tag.rfind("manylinux_", 0), 0u) << tag;
  EXPECT_EQ(fs::path(wheel).filename().string(), "envdoctor-" ENVDOCTOR_VERSION "-py3-none-" + tag + ".whl");
  int status = -1;
  json audit = wheel_tag_json(quote(wheel), &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(audit["overall_tag"], tag);
  CommandResult own = run(quote(envdoctor()) + " wheel-tag --json=envdoctor " + quote(wheel));
  expect_schema_valid("wheel-tag-envdoctor", own.out);
  json file = json::parse(own.out)["files"][0];
  EXPECT_EQ(file["claimed"], json::array({tag}));
  EXPECT_EQ(file["holds"], true);
  EXPECT_TRUE(file["problems"].empty()) << own.out;
  // The referee for RECORD: Python's own zipfile and hashlib over every member.
  std::string verify = R"PY(
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
rec = [n for n in z.namelist() if n.endswith('.dist-info/RECORD')][0]
rows = {r[0]: r for r in csv.reader(io.TextIOWrapper(z.open(rec), 'utf-8'))}
for n in z.namelist():
    r = rows.pop(n)
    if n == rec: continue
    d = z.read(n)
    h = 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()
    assert r[1] == h and int(r[2]) == len(d), n
assert not rows, rows
info = z.getinfo('envdoctor-)PY" ENVDOCTOR_VERSION R"PY(.data/scripts/envdoctor')
assert (info.external_attr >> 16) & 0o111, oct(info.external_attr >> 16)
w = z.read('envdoctor-)PY" ENVDOCTOR_VERSION R"PY(.dist-info/WHEEL').decode()
print(w)
)PY";
  CommandResult r = run("python3 -c " + quote(verify) + " " + quote(wheel));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Tag: py3-none-" + tag + "\n"), std::string::npos) << r.out;

  // The wheel passes its own check: `check --with` lays it into a fresh venv in memory.
  TempDir tmp;
  ASSERT_EQ(run("python3 -m venv --without-pip " + quote(tmp / "venv")).status, 0);
  CommandResult with = run(quote(envdoctor()) + " check --json --verify-hashes --python " +
                           quote(tmp / "venv/bin/python") + " --with " + quote(wheel));
  EXPECT_EQ(with.status, 0) << with.err;
  json checked = json::parse(with.out.empty() ? "{}" : with.out);
  EXPECT_EQ(checked["environment"]["packages"], 1);
  EXPECT_TRUE(checked["findings"].empty()) << checked.dump(2);
}

// A wheel that claims an older glibc than its binary needs is caught, by wheel-tag and by the
// build itself, which then leaves no wheel behind.
TEST(Wheel, AMisTaggedWheelIsCaught) {
  if (!have_tool("objdump")) GTEST_SKIP() << "objdump is not installed";
  GlibcNeed need = objdump_glibc_need(envdoctor());
  if (need.minor <= 5) GTEST_SKIP() << "the binary needs no glibc newer than 2.5: no older tag to claim";
  std::string claim = "manylinux_2_" + std::to_string(need.minor - 1) + "_x86_64";
  TempDir tmp;
  std::string build = "python3 " + quote(build_wheel_script()) + " --binary " + quote(envdoctor()) + " --out " +
                      quote(tmp.path().string()) + " --platform-tag " + claim;
  CommandResult refused = run(build);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("the wheel's tag does not hold, so it was removed"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::is_empty(tmp.path()));

  CommandResult built = run(build + " --no-check");
  ASSERT_EQ(built.status, 0) << built.err;
  std::string wheel = built.out.substr(0, built.out.find('\n'));
  CommandResult r = run(quote(envdoctor()) + " wheel-tag " + quote(wheel));
  EXPECT_EQ(r.status, 1);
  std::string version = *need.versions.begin();
  std::string earned = wheel_tag_json(quote(envdoctor()))["overall_tag"];
  EXPECT_NE(r.out.find("  error: tagged " + claim), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("but its files earn " + earned + ": the symbol versions "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(version), std::string::npos) << r.out;

  CommandResult any = run(build + " --no-check --platform-tag any");
  ASSERT_EQ(any.status, 0) << any.err;
  r = run(quote(envdoctor()) + " wheel-tag " + quote(any.out.substr(0, any.out.find('\n'))));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("  error: tagged any, but it holds ELF files for x86_64\n"), std::string::npos) << r.out;
}

// Every regular file and link below `dir`, relative to it.
std::set<std::string> files_below(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory() || e.is_symlink()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

// The interpreters here: pyenv's 3.8 to 3.13 and the system's.
std::vector<std::string> interpreters() {
  std::vector<std::string> out;
  for (const char* v : {"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/root/.pyenv/versions", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind(std::string(v) + ".", 0) == 0 && fs::exists(e.path() / "bin/python3")) {
        out.push_back((e.path() / "bin/python3").string());
        break;
      }
    }
  }
  out.push_back("/usr/bin/python3");
  return out;
}

class InstalledWheel : public testing::TestWithParam<std::string> {};

// With no --python, bin/envdoctor and `python -m envdoctor` examine the venv they are installed
// in (even with $VIRTUAL_ENV naming another environment and only the system's python3 on PATH),
// exactly as `--python VENV/bin/python` does; the wheel's files give no finding; pip uninstall
// removes every one of them.
TEST_P(InstalledWheel, ExaminesItsOwnVenvAndUninstallsCleanly) {
  std::string base = GetParam();
  if (!fs::exists(base)) GTEST_SKIP() << base << " is not installed";
  if (run(quote(base) + " -m pip --version").status != 0) GTEST_SKIP() << base << " has no pip";
  const std::string& wheel = built_wheel();
  ASSERT_FALSE(wheel.empty());
  TempDir tmp;
  std::string venv = tmp / "venv", python = venv + "/bin/python";
  CommandResult made = run(quote(base) + " -m venv --without-pip " + quote(venv));
  ASSERT_EQ(made.status, 0) << made.err;
  std::set<std::string> before = files_below(venv);
  // The interpreter's own pip, run for the venv.
  std::string pip = quote(base) + " -m pip --python " + quote(python) + " --disable-pip-version-check -q ";
  CommandResult installed = run(pip + "install --no-index --no-deps " + quote(wheel));
  ASSERT_EQ(installed.status, 0) << installed.err;

  std::string base_prefix = fs::path(base).parent_path().parent_path().string();
  std::string env =
      "cd / && env -u CONDA_PREFIX -u ENVDOCTOR_PYTHON VIRTUAL_ENV=" + quote(base_prefix) + " PATH=/usr/bin:/bin ";
  CommandResult named = run(quote(envdoctor()) + " check --json --verify-hashes --python " + quote(python));
  ASSERT_EQ(named.status, 0) << named.out << named.err;
  json expected = json::parse(named.out);
  EXPECT_EQ(expected["environment"]["python"], python);
  EXPECT_EQ(expected["environment"]["packages"], 1);
  // The wheel's own files (its binary, tables, package) give no finding, hashes included.
  EXPECT_TRUE(expected["findings"].empty()) << expected["findings"].dump(2);

  for (const std::string& command : {quote(venv + "/bin/envdoctor"), quote(python) + " -m envdoctor"}) {
    SCOPED_TRACE(command);
    CommandResult r = run(env + command + " check --json --verify-hashes");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out.empty() ? "{}" : r.out), expected);
    // Its MCP server (docs/mcp.md) gives the same document, with the schemas the wheel installed.
    json initialize = {{"jsonrpc", "2.0"},
                       {"id", 1},
                       {"method", "initialize"},
                       {"params",
                        {{"protocolVersion", "2025-11-25"},
                         {"capabilities", json::object()},
                         {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}};
    json call = {{"jsonrpc", "2.0"},
                 {"id", 2},
                 {"method", "tools/call"},
                 {"params", {{"name", "check_environment"}, {"arguments", {{"verify_hashes", true}}}}}};
    CommandResult served =
        run(env + "printf '%s\\n' " + quote(initialize.dump()) + " " + quote(call.dump()) + " | " + command + " mcp");
    EXPECT_EQ(served.status, 0) << served.err;
    std::string answer = served.out.substr(served.out.find('\n') + 1);
    json result = json::parse(answer, nullptr, false);
    ASSERT_FALSE(result.is_discarded()) << served.out << served.err;
    EXPECT_EQ(result["result"]["structuredContent"], expected) << served.out;
  }
  // `python -m envdoctor` passes every argument through.
  CommandResult version = run(env + quote(python) + " -m envdoctor --version");
  EXPECT_EQ(version.out, "envdoctor " ENVDOCTOR_VERSION "\n");

  CommandResult removed = run(pip + "uninstall -y envdoctor");
  ASSERT_EQ(removed.status, 0) << removed.err;
  std::set<std::string> left = files_below(venv), extra;
  std::set_difference(left.begin(), left.end(), before.begin(), before.end(), std::inserter(extra, extra.end()));
  EXPECT_TRUE(extra.empty()) << "left behind: " << *extra.begin();
  CommandResult after = run(quote(envdoctor()) + " check --json --python " + quote(python));
  EXPECT_EQ(after.status, 0) << after.err;
  json clean = json::parse(after.out.empty() ? "{}" : after.out);
  EXPECT_EQ(clean["environment"]["packages"], 0);
  EXPECT_TRUE(clean["findings"].empty()) << clean.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, InstalledWheel, testing::ValuesIn(interpreters()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).parent_path().parent_path().filename().string();
                           if (info.param == "/usr/bin/python3") name = "system";
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// make install: the binary, the tables it reads from beside its bin/, the man page and the
// completions, which name every subcommand of --help.
TEST(Install, PutsBinaryDataManPageAndCompletionsInPlace) {
  TempDir tmp;
  std::string prefix = tmp / "prefix";
  std::string build_dir = fs::path(envdoctor()).parent_path().string();
  CommandResult r = run("cmake --install " + quote(build_dir) + " --prefix " + quote(prefix));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"bin/envdoctor", "share/envdoctor/sonames.json", "share/envdoctor/schemas/check.schema.json",
                        "share/envdoctor/schemas/cuda.schema.json", "share/envdoctor/schemas/wheel-tag.schema.json",
                        "share/man/man1/envdoctor.1", "share/bash-completion/completions/envdoctor",
                        "share/zsh/site-functions/_envdoctor"})
    EXPECT_TRUE(fs::is_regular_file(prefix + "/" + f)) << f;

  // The installed binary reads its own tables: a broken copy is what it complains about.
  std::string tables = prefix + "/share/envdoctor/sonames.json";
  tmp.write("prefix/share/envdoctor/sonames.json", "{");
  r = run("env -u ENVDOCTOR_DATA_DIR " + quote(prefix + "/bin/envdoctor") + " check --python python3");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("envdoctor: " + tables + ": ", 0), 0u) << r.err;

  // The referees of the man page and the completions: groff and bash themselves.
  if (have_tool("groff")) {
    CommandResult man = run("groff -man -Tutf8 -ww -z " + quote(prefix + "/share/man/man1/envdoctor.1"));
    EXPECT_EQ(man.status, 0);
    EXPECT_EQ(man.err, "");
  }
  std::string bash = prefix + "/share/bash-completion/completions/envdoctor";
  CommandResult help = run(quote(envdoctor()) + " --help");
  std::string subcommands = help.out.substr(help.out.find("Subcommands:\n"));
  std::string complete = "source " + quote(bash) +
                         "; COMP_WORDS=(envdoctor ''); COMP_CWORD=1; _envdoctor; "
                         "printf '%s\\n' \"${COMPREPLY[@]}\"";
  CommandResult words = run("bash -c " + quote(complete));
  EXPECT_EQ(words.status, 0) << words.err;
  std::string man_page = run("cat " + quote(prefix + "/share/man/man1/envdoctor.1")).out;
  std::regex sub(R"(\n  ([a-z-]+)\s)");
  int count = 0;
  for (std::sregex_iterator it(subcommands.begin(), subcommands.end(), sub), end; it != end; ++it, ++count) {
    std::string name = (*it)[1];
    EXPECT_NE(words.out.find(name + "\n"), std::string::npos) << name;
    // A group (`uv`) is documented by its own subcommands (`.SS uv pip`).
    EXPECT_TRUE(man_page.find("\n.SS " + name + "\n") != std::string::npos ||
                man_page.find("\n.SS " + name + " ") != std::string::npos)
        << name;
  }
  EXPECT_GE(count, 6);
  // Options of a subcommand complete too.
  complete = "source " + quote(bash) +
             "; COMP_WORDS=(envdoctor check --verify); COMP_CWORD=2; _envdoctor; "
             "printf '%s\\n' \"${COMPREPLY[@]}\"";
  EXPECT_EQ(run("bash -c " + quote(complete)).out, "--verify-hashes\n");
  complete = "source " + quote(bash) +
             "; COMP_WORDS=(envdoctor uv ''); COMP_CWORD=2; _envdoctor; printf '%s\\n' \"${COMPREPLY[@]}\"";
  EXPECT_NE(run("bash -c " + quote(complete)).out.find("pip\n"), std::string::npos);
}

}  // namespace
}  // namespace envdoctor::test
