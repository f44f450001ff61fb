// `envdoctor snapshot` and `envdoctor diff` on real venvs changed by the real pip, with a real
// `python -c import` and readelf as referees: identical environments at different paths give one
// digest; an uninstall, an upgrade and an LD_LIBRARY_PATH change are each named by diff.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>

#include "fixtures/fleet_fixture.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

const json* find_by(const json& array, const char* key, const std::string& value) {
  for (const json& item : array)
    if (item.contains(key) && item[key] == value) return &item;
  return nullptr;
}

// readelf's word on a file's GNU build-id, the referee for the snapshot's.
std::string readelf_build_id(const std::string& path) {
  CommandResult r = run("readelf -n " + quote(path));
  std::smatch m;
  std::regex re("Build ID: ([0-9a-f]+)");
  return std::regex_search(r.out, m, re) ? m[1].str() : "";
}

TEST_F(FleetTest, IdenticalEnvironmentsAtDifferentPathsHaveOneDigest) {
  std::string wheel = package_wheel("alpha", "1.0", 1);
  Venv a(tmp_, "site-a/venv"), b(tmp_, "elsewhere/deeper/venv");
  a.install({wheel});
  b.install({wheel});
  ASSERT_EQ(a.import("alpha._core"), "");

  CommandResult first = a.envdoctor_run("snapshot", "");
  CommandResult again = a.envdoctor_run("snapshot", "");
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out, again.out) << "a snapshot is deterministic";
  json s = json::parse(first.out);
  json t = snapshot(b);
  EXPECT_EQ(s["digest"], t["digest"]);
  EXPECT_NE(s["environment"]["prefix"], t["environment"]["prefix"]);
  EXPECT_EQ(trim(a.envdoctor_run("snapshot", "--digest").out), s["digest"].get<std::string>());
  // The referee for the digest: docs/snapshot.md's definition, computed by Python's json and hashlib.
  std::string python_digest = trim(run("python3 -c " + quote(R"py(
import hashlib, json, sys
s = json.load(open(sys.argv[1]))
for k in ("digest", "envdoctor", "notes"): s.pop(k)
s["environment"].pop("prefix")
for f in s["findings"]: f.pop("message"); f.pop("hint")
text = json.dumps(s, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print("sha256:" + hashlib.sha256(text.encode()).hexdigest()))py") +
                                       " " + quote(save("digest.json", first.out)))
                                       .out);
  EXPECT_EQ(python_digest, s["digest"]);

  // Files inside the environment are named relative to it, with readelf's build-id.
  std::string rel = fs::relative(a.site(), tmp_ / "site-a/venv").string() + "/alpha/lib/libalpha.so.1";
  const json* lib = find_by(s["files"], "path", rel);
  ASSERT_NE(lib, nullptr) << s["files"].dump(1);
  EXPECT_EQ((*lib)["soname"], "libalpha.so.1");
  EXPECT_EQ((*lib)["owners"], json({"alpha"}));
  EXPECT_EQ((*lib)["build_id"], readelf_build_id(a.site() + "/alpha/lib/libalpha.so.1"));
  EXPECT_EQ((*lib)["size"], fs::file_size(a.site() + "/alpha/lib/libalpha.so.1"));
  const json* pkg = find_by(s["packages"], "name", "alpha");
  ASSERT_NE(pkg, nullptr);
  EXPECT_EQ((*pkg)["installer"], "pip");

  // The extension's NEEDED entry, found through its RUNPATH in alpha's own copy.
  bool found = false;
  for (const json& r : s["resolutions"])
    if (r["needed"] == "libalpha.so.1") {
      found = true;
      EXPECT_EQ(r["rule"], "runpath");
      EXPECT_EQ(r["resolved"], rel);
      EXPECT_EQ(r["owner"], "alpha");
    }
  EXPECT_TRUE(found) << s["resolutions"].dump(1);

  // `diff` of the two: nothing differs, exit 0.
  CommandResult d =
      run(quote(envdoctor()) + " diff " + quote(save("a.json", first.out)) + " " + quote(save("b.json", t.dump())));
  EXPECT_EQ(d.status, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("no differences"), std::string::npos) << d.out;
}

// Two wheels own one library (nvidia-cudnn-cu12 and -cu13's story); the real `pip uninstall` of
// one takes the file the other still lists. diff names the package, the file, the resolution
// and the new finding, and exits 1; the import fails as predicted.
TEST_F(FleetTest, DiffAfterUninstallingASharedLibrarysOwner) {
  Venv venv(tmp_, "owners");
  venv.install(two_owners_wheels());
  ASSERT_EQ(venv.import("faketorch._C"), "");
  std::string before = save("before.json", venv.envdoctor_run("snapshot", "").out);

  venv.uninstall("fake-cudnn-cu12");
  CommandResult d = venv.envdoctor_run("diff", quote(before) + " -");
  EXPECT_EQ(d.status, 1) << d.out << d.err;
  std::string rel_site = fs::relative(venv.site(), tmp_ / "owners").string();
  std::string lib_rel = rel_site + "/fakenv/cudnn/lib/libfakecudnn.so.9";
  EXPECT_NE(d.out.find("  - fake-cudnn-cu12 9.1 (pip)\n"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("  - " + lib_rel + " size "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("  ~ libfakecudnn.so.9: fake-cudnn-cu13's copy " + lib_rel + " (runpath) \u2192 not found\n"),
            std::string::npos)
      << d.out;
  std::string referee = venv.import("faketorch._C");
  EXPECT_EQ(referee, "libfakecudnn.so.9: cannot open shared object file: No such file or directory");
  EXPECT_NE(
      d.out.find("  error   missing-library " + rel_site + "/faketorch/_C" + suffix_ + " (faketorch)\n    " + referee),
      std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("error   record-missing-file " + lib_rel + " (fake-cudnn-cu13)"), std::string::npos) << d.out;

  // The same as JSON.
  json j = json::parse(venv.envdoctor_run("diff", quote(before) + " - --json").out);
  EXPECT_EQ(j["new_errors"], 2);
  EXPECT_EQ(j["packages"], json::parse(R"j([{"subject":"fake-cudnn-cu12","before":"9.1 (pip)","after":null}])j"));
  ASSERT_EQ(j["resolutions"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["resolutions"][0]["files"], json({rel_site + "/faketorch/_C" + suffix_}));
}

// A real `pip install` of a newer version: the package's version and its library's content
// (size, build-id: readelf's) change; nothing breaks, so diff exits 0.
TEST_F(FleetTest, DiffAfterAnUpgrade) {
  std::string v1 = package_wheel("beta", "1.0", 1);
  std::string v2 = package_wheel("beta", "2.0", 123456);
  Venv venv(tmp_, "upgrade");
  venv.install({v1});
  std::string lib = venv.site() + "/beta/lib/libbeta.so.1";
  std::string id1 = readelf_build_id(lib);
  std::string before = save("before.json", venv.envdoctor_run("snapshot", "").out);
  venv.install({v2});
  ASSERT_EQ(venv.import("beta._core"), "");
  std::string id2 = readelf_build_id(lib);
  ASSERT_NE(id1, id2);
  std::string after = save("after.json", venv.envdoctor_run("snapshot", "").out);

  CommandResult d = run(quote(envdoctor()) + " diff " + quote(before) + " " + quote(after));
  EXPECT_EQ(d.status, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("  ~ beta: 1.0 (pip) \u2192 2.0 (pip)\n"), std::string::npos) << d.out;
  std::string rel = fs::relative(lib, tmp_ / "upgrade").string();
  std::regex changed("  ~ " + rel + ": size [0-9]+, build-id " + id1 +
                     ", SONAME libbeta.so.1 \u2192 size [0-9]+, build-id " + id2 + ", SONAME libbeta.so.1\n");
  EXPECT_TRUE(std::regex_search(d.out, changed)) << d.out;
  EXPECT_EQ(d.out.find("findings new on B"), std::string::npos) << d.out;
}

// An extension that finds its library only on LD_LIBRARY_PATH: without it, not found (and the
// import fails); with it, found there. diff names the loader fact and the resolution, and exits
// 1 only in the direction that breaks.
TEST_F(FleetTest, DiffAfterLdLibraryPathChanges) {
  std::string libdir = tmp_ / "opt/ghost/lib";
  build_shared(libdir + "/libghost.so.3", "int ghost_fn(void) { return 3; }", "-Wl,-soname,libghost.so.3", tmp_);
  std::string ext = tmp_ / ("build/lonely/lonely/_ext" + suffix_);
  build_ext(ext, "_ext", "int ghost_fn(void);", "ghost_fn()", quote(libdir + "/libghost.so.3"));
  std::string wheel = make_wheel(tmp_ / "wheels", {{"name", "lonely"},
                                                   {"version", "2.0"},
                                                   {"tag", "cp311-cp311-linux_x86_64"},
                                                   {"purelib", false},
                                                   {"files", {{"lonely/__init__.py", ""}}},
                                                   {"paths", {{"lonely/_ext" + suffix_, ext}}}});
  Venv venv(tmp_, "ldpath");
  venv.install({wheel});
  EXPECT_EQ(run("cd / && LD_LIBRARY_PATH= " + quote(venv.python()) + " -c 'import lonely._ext'").status != 0, true);
  EXPECT_EQ(
      run("cd / && LD_LIBRARY_PATH=" + quote(libdir) + " " + quote(venv.python()) + " -c 'import lonely._ext'").status,
      0);

  std::string without = save("without.json", venv.envdoctor_run("snapshot", "--ld-library-path ''").out);
  std::string with = save("with.json", venv.envdoctor_run("snapshot", "--ld-library-path " + quote(libdir)).out);
  CommandResult fixed = run(quote(envdoctor()) + " diff " + quote(without) + " " + quote(with));
  EXPECT_EQ(fixed.status, 0) << fixed.out << fixed.err;
  EXPECT_NE(fixed.out.find("loader\n  ~ LD_LIBRARY_PATH: (none) \u2192 " + libdir + "\n"), std::string::npos)
      << fixed.out;
  EXPECT_NE(fixed.out.find("  ~ libghost.so.3: not found \u2192 " + libdir + "/libghost.so.3 (ld_library_path)\n"),
            std::string::npos)
      << fixed.out;
  EXPECT_NE(fixed.out.find("findings gone on B\n  error   missing-library"), std::string::npos) << fixed.out;

  // The other way the change breaks the import: exit 1, and `-` is this environment as the
  // command line's LD_LIBRARY_PATH says.
  CommandResult broke = venv.envdoctor_run("diff", quote(with) + " - --ld-library-path ''");
  EXPECT_EQ(broke.status, 1) << broke.out << broke.err;
  EXPECT_NE(broke.out.find("  ~ libghost.so.3: " + libdir + "/libghost.so.3 (ld_library_path) \u2192 not found\n"),
            std::string::npos)
      << broke.out;
}

// `check --format nhc` and `--format prom`: one line, exit 0/1; Prometheus text written
// atomically, whose digest is the snapshot's.
TEST_F(FleetTest, HealthCheckFormats) {
  Venv venv(tmp_, "health");
  venv.install({package_wheel("gamma", "1.0", 1)});
  CommandResult ok = venv.envdoctor_run("check", "--format nhc");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "envdoctor: OK\n");

  std::string digest = trim(venv.envdoctor_run("snapshot", "--digest").out);
  std::string prom = tmp_ / "textfile/envdoctor.prom";
  fs::create_directories(tmp_ / "textfile");
  ASSERT_EQ(venv.envdoctor_run("check", "--format prom --output " + quote(prom)).status, 0);
  std::string text = run("cat " + quote(prom)).out;
  std::string env = "environment=\"" + venv.python() + "\"";
  EXPECT_NE(text.find("# TYPE envdoctor_check_ok gauge\nenvdoctor_check_ok{" + env + "} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("envdoctor_snapshot_info{" + env + ",digest=\"" + digest + "\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("envdoctor_findings{" + env + ",code=\"missing-library\",severity=\"error\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_ / "textfile"), fs::directory_iterator()), 1)
      << "no temporary left";

  fs::remove(venv.site() + "/gamma/lib/libgamma.so.1");
  CommandResult broken = venv.envdoctor_run("check", "--format nhc");
  EXPECT_EQ(broken.status, 1);
  EXPECT_EQ(broken.out, "envdoctor: record-missing-file gamma/lib/libgamma.so.1 gamma\n");
  ASSERT_EQ(venv.envdoctor_run("check", "--format prom --output " + quote(prom)).status, 1);
  text = run("cat " + quote(prom)).out;
  EXPECT_NE(text.find("envdoctor_check_ok{" + env + "} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("envdoctor_findings{" + env + ",code=\"missing-library\",severity=\"error\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("envdoctor_findings{" + env + ",code=\"record-missing-file\",severity=\"error\"} 1\n"),
            std::string::npos);
}

// contrib/nhc/envdoctor.nhc under bash as NHC sources it. LBNL NHC is not packaged by Debian, so its
// `die` (which records the message NHC drains with) is defined here as NHC's nhc.sh defines its
// contract: `die STATUS MESSAGE`.
TEST_F(FleetTest, NhcCheckFunction) {
  if (!have_tool("bash")) GTEST_SKIP() << "needs bash";
  Venv venv(tmp_, "nhc");
  venv.install({package_wheel("zeta", "1.0", 1)});
  auto check = [&] {
    return run("ENVDOCTOR=" + quote(envdoctor()) + " bash -c " +
               quote(". " + std::string(ENVDOCTOR_SOURCE_DIR) +
                     "/contrib/nhc/envdoctor.nhc; "
                     "die() { echo \"die $1: $2\"; }; check_envdoctor " +
                     venv.python() + "; echo \"status $?\""));
  };
  EXPECT_EQ(check().out, "status 0\n");
  fs::remove(venv.site() + "/zeta/lib/libzeta.so.1");
  EXPECT_EQ(check().out, "die 1: envdoctor: record-missing-file zeta/lib/libzeta.so.1 zeta\nstatus 1\n");
}

// The issue-26 case: a venv's snapshot diffed with - and no --python, from a shell where the
// default python is the venv's base interpreter. - is the snapshot's own environment (the venv,
// as the snapshot records it), and the header names both sides; --python still chooses another.
TEST_F(FleetTest, DiffWithDashIsTheSnapshotsOwnEnvironment) {
  std::string wheel = package_wheel("alpha", "1.0", 1);
  Venv venv(tmp_, "own");
  venv.install({wheel});
  json s = snapshot(venv);
  std::string saved = save("venv.json", s.dump(2));
  std::string version = s["environment"]["version"];
  // The referee for "the environment now": the venv's own snapshot, taken again.
  std::string digest_now = trim(venv.envdoctor_run("snapshot", "--digest").out);
  ASSERT_EQ(digest_now, s["digest"].get<std::string>());

  CommandResult d = run("cd " + quote(tmp_.path()) + " && env -u VIRTUAL_ENV -u CONDA_PREFIX " + quote(envdoctor()) +
                        " diff " + quote(saved) + " -");
  EXPECT_EQ(d.status, 0) << d.out << d.err;
  EXPECT_EQ(d.out, "A " + saved + ": " + venv.python() + " (Python " + version + "), " + digest_now +
                       "\nB this environment now (-): " + venv.python() + " (Python " + version + "), " + digest_now +
                       "\nno differences\n")
      << d.err;
  json j =
      json::parse(run("cd / && env -u VIRTUAL_ENV " + quote(envdoctor()) + " diff - " + quote(saved) + " --json").out);
  EXPECT_EQ(j["same"], true) << j.dump(1);
  EXPECT_EQ(j["environments"]["a"],
            json({{"source", "-"}, {"prefix", tmp_ / "own"}, {"python", venv.python()}, {"version", version}}));
  EXPECT_EQ(j["environments"]["b"]["source"], saved);

  // --python names another environment, and the header says so.
  std::string base = trim(run(quote(venv.python()) + " -c 'import sys; print(sys.base_prefix)'").out);
  std::string base_python = trim(run(quote(venv.python()) + " -c 'import sys; print(sys._base_executable)'").out);
  CommandResult other = run(quote(envdoctor()) + " diff " + quote(saved) + " - --python " + quote(base_python));
  EXPECT_NE(other.out.find("\nB this environment now (-): " + base_python + " (Python "), std::string::npos)
      << other.out << other.err;
  EXPECT_NE(other.out.find("\ntwo environments: a path inside either prefix is compared relative to it\n"),
            std::string::npos)
      << other.out;

  // A snapshot of an environment that is not here: - cannot mean it, and diff says so.
  json moved = s;
  moved["environment"]["prefix"] = (tmp_ / "gone");
  std::string elsewhere = save("elsewhere.json", moved.dump());
  CommandResult gone = run(quote(envdoctor()) + " diff " + quote(elsewhere) + " -");
  EXPECT_EQ(gone.status, 2);
  EXPECT_EQ(gone.err, "envdoctor: diff: " + elsewhere + " is a snapshot of " + (tmp_ / "gone") +
                          "/bin/python, which is not on this machine: give --python or --prefix for -\n");
}

// A venv's snapshot names its base interpreter's files (lib-dynload) absolute; the base's own
// snapshot names them relative to its prefix. diff of the two must take each such file as one
// file: readelf's build-id and the size on disk are the referee that they are the same file.
TEST_F(FleetTest, DiffOfAVenvAndItsBaseInterpreterMatchesOneFileUnderTwoSpellings) {
  Venv venv(tmp_, "spelled");
  std::string base_python = trim(run(quote(venv.python()) + " -c 'import sys; print(sys._base_executable)'").out);
  json a = snapshot(venv);
  CommandResult base_run = run(quote(envdoctor()) + " snapshot --python " + quote(base_python));
  ASSERT_EQ(base_run.status, 0) << base_run.err;
  json b = json::parse(base_run.out);
  std::string base_prefix = b["environment"]["prefix"];
  // The files the venv's snapshot spells absolute inside the base's prefix, each checked on disk.
  size_t spelled_twice = 0;
  std::set<std::string> both;
  for (const json& f : a["files"]) {
    std::string path = f["path"];
    if (path.rfind(base_prefix + "/", 0) != 0) continue;
    std::string rel = path.substr(base_prefix.size() + 1);
    const json* there = find_by(b["files"], "path", rel);
    ASSERT_NE(there, nullptr) << rel;
    EXPECT_EQ((*there)["build_id"], f["build_id"]);
    EXPECT_EQ((*there)["size"], fs::file_size(path));
    EXPECT_EQ(f["build_id"].is_null() ? "" : f["build_id"].get<std::string>(), readelf_build_id(path));
    both.insert(path);
    both.insert(rel);
    ++spelled_twice;
  }
  ASSERT_GT(spelled_twice, 10u) << "the venv's snapshot names few of the base interpreter's files";

  std::string file_a = save("venv.json", a.dump()), file_b = save("base.json", b.dump());
  json d = json::parse(run(quote(envdoctor()) + " diff " + quote(file_a) + " " + quote(file_b) + " --json").out);
  for (const json& change : d["files"]) EXPECT_FALSE(both.count(change["subject"].get<std::string>())) << change.dump();
  EXPECT_EQ(d["environments"]["a"]["python"], venv.python());
  EXPECT_EQ(d["environments"]["b"]["prefix"], base_prefix);
  CommandResult text = run(quote(envdoctor()) + " diff " + quote(file_a) + " " + quote(file_b));
  EXPECT_EQ(text.out.find("A " + file_a + ": " + venv.python() + " (Python "), 0u) << text.out;
  EXPECT_NE(text.out.find("\nB " + file_b + ": " + base_python), std::string::npos) << text.out;
}

TEST_F(FleetTest, DiffRefusesWhatIsNotASnapshot) {
  std::string bad = save("bad.json", "{\"schema\": 1}");
  CommandResult r = run(quote(envdoctor()) + " diff " + quote(bad) + " " + quote(bad));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "envdoctor: " + bad + ": not an envdoctor snapshot\n");
  std::string hostile = save(
      "hostile.json",
      R"({"schema":1,"digest":5,"files":[1,{"path":[]}],"packages":[null],"resolutions":[],"findings":[{"severity":7}]})");
  r = run(quote(envdoctor()) + " diff " + quote(hostile) + " " + quote(bad));
  EXPECT_EQ(r.status, 2);
  r = run(quote(envdoctor()) + " diff " + quote(hostile) + " " + quote(hostile));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(run(quote(envdoctor()) + " diff - -").status, 2);
}

}  // namespace
}  // namespace envdoctor::test
