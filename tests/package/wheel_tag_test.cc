// `envdoctor wheel-tag` against auditwheel's own policy data: wheels built here with gcc and g++
// (C and C++ extensions, -m32 for i686, zlib users with and without zcalloc, a module referencing
// PyFPE_jbuf, a pure wheel, mis-tagged wheels) and hand-made ELF files for the machines this host
// cannot compile for. The referee is the data: each expected tag is computed here from
// data/auditwheel/*-policy.json and what readelf (an independent reader) says the file needs, and
// every --json line is held to auditwheel's show-schema.json, every --json=envdoctor document to
// its schema. Where the tests' pinned auditwheel is installed, every wheel built here is also
// held to the document `auditwheel show --json` prints for it (package/auditwheel_show.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/auditwheel_show.h"
#include "fixtures/elf_writer.h"
#include "fixtures/fixture.h"
#include "fixtures/schema.h"
#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

// What a file asks of the system, as the referee reads it.
struct Needs {
  std::string arch;
  bool musl = false;
  std::vector<std::string> needed;
  std::map<std::string, std::set<std::string>> versions;  // library -> version names
  std::set<std::string> undefined;                        // non-weak undefined symbols
  bool pyfpe = false;
};

bool is_linker(const std::string& lib) {
  return lib.find("ld-linux") != std::string::npos || lib == "ld64.so.1" || lib == "ld64.so.2";
}

json policy_data(bool musl) {
  std::ifstream in(std::string(ENVDOCTOR_SOURCE_DIR) + "/data/auditwheel/" +
                   (musl ? "musllinux-policy.json" : "manylinux-policy.json"));
  return json::parse(in);
}

// The one musllinux policy auditwheel holds musl files to: this machine's musl (as its loader
// names its version), else the newest the data defines.
const std::string& musl_policy_here() {
  static const std::string policy = [] {
    CommandResult r = run("for l in /lib/libc.musl-*.so.1; do [ -e \"$l\" ] && \"$l\"; done 2>&1");
    std::smatch m;
    if (std::regex_search(r.out, m, std::regex(R"(Version (\d+)\.(\d+)\.)")))
      return "musllinux_" + m[1].str() + "_" + m[2].str();
    json newest;
    for (const json& p : policy_data(true))
      if (p["name"] != "linux" && (newest.is_null() || p["priority"] < newest["priority"])) newest = p;
    return newest["name"].get<std::string>();
  }();
  return policy;
}

// The best policy of the data whose symbol-version caps, whitelist and blacklist the file meets
// (for musl, of the one policy auditwheel judges it against, or of all of them).
std::string tag_by_the_data(const Needs& n, bool every_musl_policy = false) {
  json policies = policy_data(n.musl);
  std::sort(policies.begin(), policies.end(),
            [](const json& a, const json& b) { return a["priority"].get<int>() > b["priority"].get<int>(); });
  for (const json& p : policies) {
    if (n.pyfpe || p["name"] == "linux" || !p["symbol_versions"].contains(n.arch)) continue;
    if (n.musl && !every_musl_policy && p["name"] != musl_policy_here()) continue;
    const json& caps = p["symbol_versions"][n.arch];
    bool ok = true;
    for (const auto& [lib, versions] : n.versions)
      for (const std::string& v : versions) {
        std::string prefix = v.substr(0, v.find('_')), rest = v.substr(v.find('_') + 1);
        if (caps.contains(prefix) && std::find(caps[prefix].begin(), caps[prefix].end(), rest) == caps[prefix].end())
          ok = false;
      }
    std::set<std::string> whitelist;
    for (std::string lib : p["lib_whitelist"]) {
      if (n.musl && lib == "libc.so") lib = "libc.musl-" + std::string(n.arch == "i686" ? "x86" : n.arch) + ".so.1";
      whitelist.insert(lib);
    }
    for (const std::string& lib : n.needed) ok &= is_linker(lib) || whitelist.count(lib) > 0;
    for (const auto& [lib, symbols] : p["blacklist"].items()) {
      if (std::find(n.needed.begin(), n.needed.end(), lib) == n.needed.end()) continue;
      for (const std::string& s : symbols) ok &= !n.undefined.count(s);
    }
    if (ok) return p["name"].get<std::string>() + "_" + n.arch;
  }
  return "linux_" + n.arch;
}

// The arch's oldest policy in the data: what a file that needs nothing versioned earns.
std::string floor_of(const std::string& arch, bool musl = false) { return tag_by_the_data({arch, musl}); }

// readelf's view of a real file: NEEDED, version needs and undefined symbols.
Needs readelf_needs(const std::string& file, const std::string& arch) {
  Needs n;
  n.arch = arch;
  std::istringstream dyn(run("readelf -dW " + quote(file)).out);
  std::regex needed(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::string line; std::getline(dyn, line);)
    if (std::smatch m; std::regex_search(line, m, needed)) n.needed.push_back(m[1]);
  std::istringstream ver(run("readelf -VW " + quote(file)).out);
  std::regex need_file(R"(Version: \d+\s+File: (\S+)\s+Cnt:)"), need_name(R"(Name: (\S+)\s+Flags:)");
  std::string current;
  bool in_needs = false;
  for (std::string line; std::getline(ver, line);) {
    if (line.find(".gnu.version_r") != std::string::npos) in_needs = true;
    else if (line.find("section '") != std::string::npos) in_needs = false;
    std::smatch m;
    if (in_needs && std::regex_search(line, m, need_file)) current = m[1];
    else if (in_needs && std::regex_search(line, m, need_name) && !is_linker(current)) n.versions[current].insert(m[1]);
  }
  std::istringstream syms(run("readelf --dyn-syms -W " + quote(file)).out);
  for (std::string line; std::getline(syms, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name) || ndx != "UND") continue;
    name = name.substr(0, name.find('@'));
    if (bind != "WEAK") n.undefined.insert(name);
    if (name == "PyFPE_jbuf" || name == "PyFPE_dummy" || name == "PyFPE_counter") n.pyfpe = true;
  }
  return n;
}

// The needs of a hand-made file, from its spec.
Needs spec_needs(const HandElf& spec, const std::string& arch, bool musl = false) {
  Needs n{arch, musl, spec.needed, {}, {}, false};
  for (const HandElf::Reference& r : spec.undefined) {
    n.undefined.insert(r.symbol);
    if (!r.version.empty() && !is_linker(r.library)) n.versions[r.library].insert(r.version);
  }
  return n;
}

struct TagRun {
  int status = -1;
  std::vector<json> results;  // one per FILE
  std::string text;
};

// `wheel-tag --json FILES` (each line held to auditwheel's schema, and each wheel's to what
// auditwheel itself prints for it where `referee` is set), `--json=envdoctor FILES` (held to its
// schema; its "auditwheel" is the line, its fields are each result's "envdoctor" here), then the
// text form.
TagRun wheel_tag(const std::vector<std::string>& files, bool referee = true) {
  std::string args;
  for (const std::string& f : files) args += " " + quote(f);
  TagRun r;
  CommandResult j = run(quote(envdoctor()) + " wheel-tag --json" + args);
  EXPECT_NE(j.status, 2) << j.err;
  std::istringstream lines(j.out);
  for (std::string line; std::getline(lines, line);) {
    expect_schema_valid("wheel-tag", line);
    r.results.push_back(json::parse(line));
    const std::string& file = files[r.results.size() - 1];
    std::string why, expected = referee && file.ends_with(".whl") ? auditwheel_show_line(file, &why) : "";
    if (!expected.empty()) EXPECT_EQ(line + "\n", expected) << file;
    if (why.starts_with("auditwheel show printed no document")) ADD_FAILURE() << file << ": " << why;
  }
  EXPECT_EQ(r.results.size(), files.size()) << j.out << j.err;
  CommandResult own = run(quote(envdoctor()) + " wheel-tag --json=envdoctor" + args);
  EXPECT_EQ(own.status, j.status) << own.err;
  expect_schema_valid("wheel-tag-envdoctor", own.out);
  json doc = json::parse(own.out, nullptr, false);
  for (size_t i = 0; doc.is_object() && i < r.results.size() && i < doc["files"].size(); ++i) {
    EXPECT_EQ(doc["files"][i]["auditwheel"], r.results[i]);
    r.results[i]["envdoctor"] = doc["files"][i];
  }
  CommandResult t = run(quote(envdoctor()) + " wheel-tag" + args);
  EXPECT_EQ(t.status, j.status) << t.out << t.err;
  r.status = j.status;
  r.text = t.out;
  return r;
}

// envdoctor's own binary (the tag `make wheel` gives it) and libraries of this machine, C and C++.
TEST(WheelTagOfThisMachine, TheBinaryAndSystemLibrariesEarnTheTagOfThePolicyData) {
  if (!have_tool("readelf")) GTEST_SKIP() << "readelf is not installed (binutils)";
  std::vector<std::string> files = {envdoctor()};
  for (const char* lib : {"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libzip.so.4",
                          "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/bin/ls"})
    if (fs::exists(lib)) files.push_back(lib);
  TagRun r = wheel_tag(files);
  EXPECT_EQ(r.status, 0);
  for (size_t i = 0; i < files.size() && i < r.results.size(); ++i) {
    SCOPED_TRACE(files[i]);
    EXPECT_EQ(r.results[i]["overall_tag"], tag_by_the_data(readelf_needs(files[i], "x86_64")));
  }
  EXPECT_EQ(r.results[0]["overall_tag"].get<std::string>().rfind("manylinux_", 0), 0u);
}

class WheelTag : public ::testing::Test {
 protected:
  void SetUp() override {
    include_ = python_include();
    suffix_ = ext_suffix();
    if (include_.empty() || !fs::exists(include_ + "/Python.h")) GTEST_SKIP() << "no Python.h for python3";
    if (!have_tool("readelf")) GTEST_SKIP() << "readelf is not installed (binutils)";
  }

  // A C extension module `_c`, built with `compiler` from `source` and `flags`.
  std::string extension(const std::string& name, const std::string& source, const std::string& compiler,
                        const std::string& flags = "") {
    std::string src = tmp_.write(name + (compiler == "g++" ? ".cc" : ".c"), source);
    std::string out = tmp_ / (name + suffix_);
    CommandResult r = run(compiler + " -shared -fPIC -O1 -I" + quote(include_) + " -o " + quote(out) + " " +
                          quote(src) + " " + flags);
    EXPECT_EQ(r.status, 0) << r.err;
    return out;
  }
  std::string module(const std::string& name, const std::string& decl, const std::string& call,
                     const std::string& flags = "") {
    return extension(name, extension_source(name, decl, call), "gcc", flags);
  }
  std::string wheel_of(const std::string& file, const std::string& platform, const std::string& project = "pkg") {
    fs::create_directories(tmp_ / ("wheels-" + platform));
    return make_wheel(tmp_ / ("wheels-" + platform),
                      {{"name", project},
                       {"version", "1.0"},
                       {"tag", "cp311-cp311-" + platform},
                       {"purelib", false},
                       {"files", {{project + "/__init__.py", ""}}},
                       {"paths", {{project + "/" + fs::path(file).filename().string(), file}}}});
  }
  std::string hand_made(const std::string& name, const HandElf& spec) {
    std::vector<u8> bytes = write_elf(spec);
    std::string path = tmp_ / name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return path;
  }

  TempDir tmp_;
  std::string include_, suffix_;
};

// A C extension that needs only libc: the tag the data gives, and a wheel so tagged holds.
TEST_F(WheelTag, ACExtensionEarnsTheTagOfThePolicyData) {
  std::string ext = module("_c", "#include <string.h>", "(long)strlen(\"abc\")");
  std::string expected = tag_by_the_data(readelf_needs(ext, "x86_64"));
  TagRun lone = wheel_tag({ext});
  EXPECT_EQ(lone.status, 0);
  EXPECT_EQ(lone.results[0]["overall_tag"], expected);
  EXPECT_EQ(lone.results[0]["pure"], false);
  EXPECT_NE(lone.text.find(ext + ": " + expected + "\n"), std::string::npos) << lone.text;
  EXPECT_NE(lone.text.find("is consistent with the following platform tag: \"" + expected + "\"."), std::string::npos);
  TagRun w = wheel_tag({wheel_of(ext, expected)});
  EXPECT_EQ(w.status, 0) << w.text;
  EXPECT_EQ(w.results[0]["overall_tag"], expected);
  EXPECT_EQ(w.results[0]["envdoctor"]["holds"], true);
  EXPECT_EQ(w.results[0]["envdoctor"]["claimed"], json::array({expected}));
  json versions = json::object();
  for (const auto& [lib, v] : readelf_needs(ext, "x86_64").versions)
    versions[lib] = std::vector<std::string>(v.begin(), v.end());
  EXPECT_EQ(w.results[0]["versioned_symbols"], versions);
}

// libstdc++ and libgcc_s are in every policy's whitelist, with caps on GLIBCXX_ and CXXABI_.
TEST_F(WheelTag, ACppExtensionLinkingLibstdcxxEarnsAManylinuxTag) {
  std::string source =
      "#include <Python.h>\n#include <string>\n#include <stdexcept>\n"
      "static PyObject* f(PyObject*, PyObject*) { std::string s = \"a\"; s += std::to_string(4);\n"
      "  if (s.size() > 9) throw std::runtime_error(s); return PyLong_FromLong(s.size()); }\n"
      "static PyMethodDef m[] = {{\"f\", f, METH_NOARGS, \"\"}, {}};\n"
      "static PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_cpp\", 0, -1, m};\n"
      "PyMODINIT_FUNC PyInit__cpp(void) { return PyModule_Create(&d); }\n";
  std::string ext = extension("_cpp", source, "g++");
  Needs needs = readelf_needs(ext, "x86_64");
  ASSERT_NE(std::find(needs.needed.begin(), needs.needed.end(), "libstdc++.so.6"), needs.needed.end());
  ASSERT_TRUE(needs.versions.count("libstdc++.so.6"));
  std::string expected = tag_by_the_data(needs);
  EXPECT_EQ(expected.rfind("manylinux_", 0), 0u) << expected;
  TagRun r = wheel_tag({wheel_of(ext, expected)});
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(r.results[0]["overall_tag"], expected);
  EXPECT_TRUE(r.results[0]["external_libs"].empty()) << r.results[0].dump();
}

// i686: gcc -m32. Its floor is manylinux_2_5, as x86_64's.
TEST_F(WheelTag, AnI686LibraryBuiltWithM32) {
  std::string src = tmp_.write("i.c", "#include <string.h>\nint f(const char* s) { return (int)strlen(s); }\n");
  std::string lib = tmp_ / "libi686.so";
  if (run("gcc -m32 -shared -fPIC -o " + quote(lib) + " " + quote(src)).status != 0)
    GTEST_SKIP() << "gcc -m32 cannot link here (gcc-multilib, scripts/install-deps.sh)";
  std::string expected = tag_by_the_data(readelf_needs(lib, "i686"));
  EXPECT_EQ(floor_of("i686"), "manylinux_2_5_i686");
  TagRun r = wheel_tag({lib, wheel_of(lib, expected)});
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(r.results[0]["overall_tag"], expected);
  EXPECT_EQ(r.results[1]["overall_tag"], expected);
  EXPECT_EQ(r.results[1]["envdoctor"]["arch"], "i686");
}

// libz.so.1 is allowed; its internals (zcalloc, zcfree) are blacklisted.
TEST_F(WheelTag, AZlibUserWithoutZcallocIsAllowedAndWithItEarnsNoManylinuxTag) {
  std::string plain = module("_z", "#include <zlib.h>", "(long)zlibVersion()[0]", "-Wl,--no-as-needed -lz");
  Needs plain_needs = readelf_needs(plain, "x86_64");
  ASSERT_NE(std::find(plain_needs.needed.begin(), plain_needs.needed.end(), "libz.so.1"), plain_needs.needed.end());
  std::string expected = tag_by_the_data(plain_needs);
  EXPECT_EQ(expected.rfind("manylinux_", 0), 0u) << expected;
  std::string zc = module("_zc", "#include <zlib.h>\nvoid* zcalloc(void*, unsigned, unsigned);",
                          "(long)zlibVersion()[0] + (zcalloc(0, 1, 1) != 0)", "-Wl,--no-as-needed -lz");
  Needs zc_needs = readelf_needs(zc, "x86_64");
  ASSERT_TRUE(zc_needs.undefined.count("zcalloc"));
  EXPECT_EQ(tag_by_the_data(zc_needs), "linux_x86_64");
  TagRun r = wheel_tag({plain, zc});
  EXPECT_EQ(r.status, 0);  // lone files claim nothing
  EXPECT_EQ(r.results[0]["overall_tag"], expected);
  EXPECT_EQ(r.results[1]["overall_tag"], "linux_x86_64");
  const json& upgrades = r.results[1]["policy_upgrades"];
  ASSERT_TRUE(upgrades.contains(floor_of("x86_64"))) << upgrades.dump();
  EXPECT_EQ(upgrades[floor_of("x86_64")]["blacklisted_symbols"], json({{"libz.so.1", {"zcalloc"}}}));
  EXPECT_NE(r.text.find("the following black-listed symbol dependencies will need to be eliminated: From libz.so.1: "
                        "zcalloc"),
            std::string::npos)
      << r.text;
  // The same module in a wheel tagged manylinux: the tag claims more than it earns.
  TagRun w = wheel_tag({wheel_of(zc, expected)});
  EXPECT_EQ(w.status, 1);
  EXPECT_NE(w.text.find("error: tagged " + expected +
                        ", but its files earn linux_x86_64: the black-listed symbol "
                        "dependencies zcalloc (libz.so.1) will need to be eliminated"),
            std::string::npos)
      << w.text;
}

// A library from outside the wheel is looked for on this system, as auditwheel does: what it needs
// is outside the wheel too. The referee is ld.so itself (ldd), less the policy's whitelist.
TEST_F(WheelTag, ALibraryOfThisSystemIsFollowedAsAuditwheelFollowsIt) {
  if (!have_tool("ldd")) GTEST_SKIP() << "no ldd";
  std::string ext = module("_zip", "#include <zip.h>", "(long)zip_libzip_version()[0]", "-lzip");
  std::set<std::string> expected;
  std::map<std::string, std::string> paths;
  json oldest;
  for (const json& p : policy_data(false))
    if (p["name"] == "manylinux_2_5") oldest = p;
  std::istringstream ldd(run("ldd " + quote(ext)).out);
  std::regex line(R"(^\s*(\S+) => (\S+) \()");
  for (std::string l; std::getline(ldd, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line) || is_linker(m[1])) continue;
    bool allowed = std::find(oldest["lib_whitelist"].begin(), oldest["lib_whitelist"].end(), m[1].str()) !=
                   oldest["lib_whitelist"].end();
    if (allowed) continue;
    expected.insert(m[1]);
    fs::path file = m[2].str();
    while (fs::is_symlink(file)) file = (file.parent_path() / fs::read_symlink(file)).lexically_normal();
    paths[m[1]] = file.string();
  }
  ASSERT_TRUE(expected.count("libzip.so.4")) << run("ldd " + quote(ext)).out;
  TagRun r = wheel_tag({wheel_of(ext, "linux_x86_64")});
  EXPECT_EQ(r.status, 0);
  json libs = json::object();
  for (const std::string& lib : expected) libs[lib] = paths[lib];
  EXPECT_EQ(r.results[0]["external_libs"], libs);
  EXPECT_EQ(r.results[0]["overall_tag"], "linux_x86_64");
  EXPECT_EQ(r.results[0]["policy_upgrades"]["manylinux_2_5_x86_64"]["libs_to_eliminate"],
            json(std::vector<std::string>(expected.begin(), expected.end())));
}

// A file whose GNU property note says it needs x86-64-v2 or more (-mneeded) depends on ISA
// extensions no policy allows; readelf -n is the referee of what the note says.
TEST_F(WheelTag, AFileThatNeedsX86_64_v3EarnsNoManylinuxTag) {
  std::string src = tmp_.write("v.c", "int f(int x) { return x * 3; }\n");
  std::string v3 = tmp_ / "libv3.so", base = tmp_ / "libbase.so";
  if (run("gcc -shared -fPIC -march=x86-64-v3 -mneeded -o " + quote(v3) + " " + quote(src)).status != 0 ||
      run("gcc -shared -fPIC -mneeded -o " + quote(base) + " " + quote(src)).status != 0)
    GTEST_SKIP() << "this gcc has no -mneeded";
  ASSERT_NE(run("readelf -n " + quote(v3)).out.find("x86 ISA needed: x86-64-baseline, x86-64-v2, x86-64-v3"),
            std::string::npos);
  TagRun r = wheel_tag({v3, base});
  EXPECT_EQ(r.results[0]["unsupported_isa"], true);
  EXPECT_EQ(r.results[0]["overall_tag"], "linux_x86_64");
  EXPECT_EQ(r.results[1]["unsupported_isa"], false);
  EXPECT_EQ(r.results[1]["overall_tag"], tag_by_the_data(readelf_needs(base, "x86_64")));
  EXPECT_NE(r.text.find("This wheel depends on unsupported ISA extensions."), std::string::npos) << r.text;
}

// PyFPE_jbuf ties a module to one interpreter build: no manylinux tag.
TEST_F(WheelTag, AModuleReferencingPyFPE_jbufEarnsNoManylinuxTag) {
  std::string ext = module("_fpe", "extern char PyFPE_jbuf[];", "(long)PyFPE_jbuf[0]");
  Needs needs = readelf_needs(ext, "x86_64");
  ASSERT_TRUE(needs.pyfpe);
  TagRun r = wheel_tag({ext, wheel_of(ext, "manylinux_2_17_x86_64")});
  EXPECT_EQ(r.results[0]["overall_tag"], tag_by_the_data(needs));
  EXPECT_EQ(r.results[0]["overall_tag"], "linux_x86_64");
  EXPECT_EQ(r.results[0]["pyfpe"], true);
  EXPECT_NE(r.text.find("This wheel uses the PyFPE_jbuf function, which is not compatible with the "
                        "manylinux/musllinux tags."),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.status, 1);  // the wheel's manylinux_2_17 does not hold
  EXPECT_NE(r.text.find("it uses the PyFPE_jbuf function"), std::string::npos) << r.text;
}

// A Python 2 module (init<name>) that calls a narrow-unicode function of its interpreter, as
// cffi 1.5.0's did (auditwheel's own test wheel): no manylinux tag. The function is typed as one
// by the library that defines it, here a stand-in for libpython2.7 that this machine lacks.
TEST_F(WheelTag, APython2ModuleCallingPyUnicodeUCS2EarnsNoManylinuxTag) {
  std::string stub_src = tmp_.write("py27.c", "void* PyUnicodeUCS2_FromString(const char* s) { return (void*)s; }\n");
  std::string stub = tmp_ / "libpython2.7-stub.so.1";
  // It calls libc too: auditwheel names no policy for an extension module that needs no C library.
  std::string src =
      tmp_.write("u.c",
                 "#include <string.h>\nvoid* PyUnicodeUCS2_FromString(const char*);\n"
                 "void* u_last;\nsize_t u_size;\n"
                 "void init_u(const char* s) { u_last = PyUnicodeUCS2_FromString(s); u_size = strlen(s); }\n");
  std::string ext = tmp_ / "_u.so";
  ASSERT_EQ(
      run("gcc -shared -fPIC -Wl,-soname,libpython2.7-stub.so.1 -o " + quote(stub) + " " + quote(stub_src)).status, 0);
  ASSERT_EQ(
      run("gcc -shared -fPIC -fno-builtin -Wl,--no-as-needed -o " + quote(ext) + " " + quote(src) + " " + quote(stub))
          .status,
      0);
  ASSERT_NE(run("readelf --dyn-syms -W " + quote(ext)).out.find("FUNC    GLOBAL DEFAULT  UND PyUnicodeUCS2_FromString"),
            std::string::npos);
  TagRun r = wheel_tag({ext, wheel_of(ext, "linux_x86_64", "narrow")});
  for (const json& j : r.results) {
    EXPECT_EQ(j["ucs2"], true) << j.dump();
    EXPECT_EQ(j["overall_tag"], "linux_x86_64");
    EXPECT_EQ(j["external_libs"], json({{"libpython2.7-stub.so.1", nullptr}}));
  }
  EXPECT_NE(r.text.find("This wheel is compiled against a narrow unicode (UCS2) version of Python"), std::string::npos)
      << r.text;
}

// Issue 26, item 1: a wheel with no ELF file is fine, and says nothing that contradicts itself.
TEST_F(WheelTag, APureWheelIsFine) {
  std::string pure = make_wheel(tmp_.path().string(), {{"name", "tinypure"},
                                                       {"version", "0.1"},
                                                       {"tag", "py3-none-any"},
                                                       {"files", {{"tinypure/__init__.py", "x = 1\n"}}}});
  std::vector<std::string> files = {pure};
  CommandResult bundled =
      run("python3 -c 'import ensurepip, glob, os; print(\"\\n\".join(glob.glob(os.path.join("
          "os.path.dirname(ensurepip.__file__), \"_bundled\", \"*.whl\"))))'");
  std::istringstream more(bundled.out);
  for (std::string line; std::getline(more, line);)
    if (!line.empty()) files.push_back(line);
  TagRun r = wheel_tag(files);
  EXPECT_EQ(r.status, 0) << r.text;
  for (const json& j : r.results) {
    EXPECT_EQ(j["pure"], true) << j.dump();
    EXPECT_EQ(j["envdoctor"]["holds"], true);
    EXPECT_TRUE(j["envdoctor"]["problems"].empty());
  }
  EXPECT_NE(r.text.find(pure + ": a pure wheel (no ELF file): fine on any platform; tagged any, which holds\n"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("error"), std::string::npos) << r.text;
  // Tagged for a platform, the same files earn no tag to check (auditwheel's error), and the tag
  // claims less than it could: exit 0.
  TagRun platform = wheel_tag({make_wheel(tmp_.path().string(), {{"name", "tinyplat"},
                                                                 {"version", "0.1"},
                                                                 {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                                 {"files", {{"tinyplat/__init__.py", ""}}}})});
  EXPECT_EQ(platform.status, 0) << platform.text;
  EXPECT_TRUE(platform.results[0].contains("error")) << platform.results[0].dump();
  EXPECT_EQ(platform.results[0]["envdoctor"]["holds"], true);
}

// Tags that claim more than the files earn: an older policy (by name or legacy alias), `any`,
// another architecture. The same wheel correctly tagged holds.
TEST_F(WheelTag, AMisTaggedWheelExitsOne) {
  // memfd_create is GLIBC_2.27: above manylinux_2_17, and a policy of its own in the data.
  std::string ext = module("_m", "#define _GNU_SOURCE\n#include <sys/mman.h>", "memfd_create(\"x\", 0)");
  Needs needs = readelf_needs(ext, "x86_64");
  std::string earned = tag_by_the_data(needs);
  ASSERT_EQ(earned, "manylinux_2_27_x86_64") << "memfd_create is GLIBC_2.27; the data should say 2_27";
  EXPECT_EQ(wheel_tag({wheel_of(ext, earned)}).status, 0);
  for (const char* claim : {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"}) {
    SCOPED_TRACE(claim);
    TagRun r = wheel_tag({wheel_of(ext, claim)});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.results[0]["envdoctor"]["holds"], false);
    size_t at = r.text.find(std::string("error: tagged ") + claim + ", but its files earn " + earned +
                            ": the symbol versions ");
    ASSERT_NE(at, std::string::npos) << r.text;
    std::string line = r.text.substr(at, r.text.find('\n', at) - at);
    EXPECT_NE(line.find("GLIBC_2.27"), std::string::npos) << line;
    EXPECT_NE(line.find("(libc.so.6) are too new for it"), std::string::npos) << line;
  }
  TagRun any = wheel_tag({make_wheel(
      tmp_.path().string(),
      {{"name", "anyext"}, {"version", "1.0"}, {"tag", "py3-none-any"}, {"paths", {{"anyext/_m" + suffix_, ext}}}})});
  EXPECT_EQ(any.status, 1);
  EXPECT_EQ(any.results[0]["overall_tag"], earned);
  EXPECT_NE(any.text.find("error: tagged any, but it holds ELF files for x86_64\n"), std::string::npos) << any.text;
  TagRun other = wheel_tag({wheel_of(ext, "manylinux_2_28_aarch64")});
  EXPECT_EQ(other.status, 1);
  EXPECT_TRUE(other.results[0].contains("error")) << other.results[0].dump();
  EXPECT_NE(other.text.find("with a 'aarch64' architecture found"), std::string::npos) << other.text;
}

// The architectures that this host cannot compile for, each by its header alone: the tag the data
// gives for what the file needs, the architecture's floor for a file that needs nothing versioned.
struct Machine {
  const char* arch;
  u16 machine;
  bool is64, be;
  u32 e_flags;
  const char* floor;  // the oldest policy the issue names for it
  const char* glibc;  // a glibc version its oldest policy allows
};

class ForeignMachine : public WheelTag, public ::testing::WithParamInterface<Machine> {};

TEST_P(ForeignMachine, EarnsTheTagOfThePolicyDataByItsHeader) {
  const Machine& m = GetParam();
  EXPECT_EQ(floor_of(m.arch), m.floor);
  HandElf bare{m.is64, m.be, m.machine, m.e_flags, "libbare.so", {"libc.so.6"}, "", {{"puts", "", ""}}, {"f"}};
  HandElf cxx = bare;
  cxx.soname = "libcxx.so";
  cxx.needed = {"libstdc++.so.6", "libm.so.6", "libc.so.6"};
  cxx.undefined = {{"_ZNSt12length_errorD1Ev", "libstdc++.so.6", "GLIBCXX_3.4.21"},
                   {"_ZdlPv", "libstdc++.so.6", "GLIBCXX_3.4"},
                   {"__cxa_begin_catch", "libstdc++.so.6", "CXXABI_1.3"},
                   {"memcpy", "libc.so.6", m.glibc}};
  HandElf other = bare;
  other.soname = "libother.so";
  other.needed = {"libc.so.6", "libfoo.so.1"};
  std::string bare_file = hand_made("libbare.so", bare), cxx_file = hand_made("libcxx.so", cxx),
              other_file = hand_made("libother.so", other);
  std::string cxx_tag = tag_by_the_data(spec_needs(cxx, m.arch));
  // Hand-made files have no section headers, where auditwheel's reader looks for versions.
  TagRun r = wheel_tag({bare_file, cxx_file, other_file, wheel_of(cxx_file, cxx_tag)}, false);
  EXPECT_EQ(r.status, 0) << r.text;
  EXPECT_EQ(r.results[0]["overall_tag"], m.floor);
  EXPECT_EQ(r.results[1]["overall_tag"], cxx_tag);
  EXPECT_EQ(r.results[2]["overall_tag"], std::string("linux_") + m.arch);
  EXPECT_EQ(r.results[2]["external_libs"], json({{"libfoo.so.1", nullptr}}));
  EXPECT_EQ(r.results[3]["overall_tag"], cxx_tag);
  EXPECT_EQ(r.results[3]["envdoctor"]["arch"], m.arch);
  // One policy older than earned, where there is one, does not hold.
  json policies = policy_data(false);
  std::string older;
  int earned_priority = 0;
  for (const json& p : policies)
    if (p["name"].get<std::string>() + "_" + m.arch == cxx_tag) earned_priority = p["priority"];
  int best = 1000;
  for (const json& p : policies)
    if (p["symbol_versions"].contains(m.arch) && p["priority"] > earned_priority && p["priority"] < best)
      best = p["priority"], older = p["name"].get<std::string>() + "_" + m.arch;
  if (!older.empty()) EXPECT_EQ(wheel_tag({wheel_of(cxx_file, older)}, false).status, 1) << older;
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, ForeignMachine,
    ::testing::Values(Machine{"aarch64", EM_AARCH64, true, false, 0, "manylinux_2_17_aarch64", "GLIBC_2.17"},
                      Machine{"ppc64le", EM_PPC64, true, false, 2, "manylinux_2_17_ppc64le", "GLIBC_2.17"},
                      Machine{"s390x", EM_S390, true, true, 0, "manylinux_2_17_s390x", "GLIBC_2.17"},
                      Machine{"armv7l", EM_ARM, false, false, 0x05000400, "manylinux_2_17_armv7l", "GLIBC_2.17"},
                      Machine{"riscv64", 243, true, false, 5, "manylinux_2_31_riscv64", "GLIBC_2.27"},
                      Machine{"x86_64", EM_X86_64, true, false, 0, "manylinux_2_5_x86_64", "GLIBC_2.17"}),
    [](const auto& info) { return std::string(info.param.arch); });

// Class and byte order decide as much as the machine: a big-endian aarch64 file, a 32-bit
// x86-64 one and a soft-float ARM one have no policy.
TEST_F(WheelTag, AMachineWithoutAPolicyIsSaidSo) {
  HandElf be{true, true, EM_AARCH64, 0, "libbe.so", {"libc.so.6"}, "", {}, {"f"}};
  HandElf x32{false, false, EM_X86_64, 0, "libx32.so", {"libc.so.6"}, "", {}, {"f"}};
  HandElf soft{false, false, EM_ARM, 0x05000200, "libsoft.so", {"libc.so.6"}, "", {}, {"f"}};
  TagRun r = wheel_tag({hand_made("libbe.so", be), hand_made("libx32.so", x32), hand_made("libsoft.so", soft)});
  EXPECT_EQ(r.status, 0);
  for (const json& j : r.results) EXPECT_TRUE(j.contains("error")) << j.dump();
  EXPECT_NE(r.text.find("armv7l shall use hard-float"), std::string::npos) << r.text;
}

// A glibc need between two defined policies rounds up to the next defined one: GLIBC_2.29 is in
// no policy before manylinux_2_31; a wheel tagged manylinux_2_30 (undefined) is held to 2_28.
TEST_F(WheelTag, ANeedBetweenTwoPoliciesRoundsUpToTheNextDefinedOne) {
  HandElf spec{
      true, false, EM_X86_64, 0, "libnew.so", {"libm.so.6", "libc.so.6"}, "", {{"exp", "libm.so.6", "GLIBC_2.29"}},
      {"f"}};
  std::string lib = hand_made("libnew.so", spec);
  std::string expected = tag_by_the_data(spec_needs(spec, "x86_64"));
  EXPECT_EQ(expected, "manylinux_2_31_x86_64");
  TagRun r = wheel_tag({lib, wheel_of(lib, "manylinux_2_30_x86_64"), wheel_of(lib, "manylinux_2_31_x86_64")}, false);
  EXPECT_EQ(r.results[0]["overall_tag"], expected);
  EXPECT_EQ(r.results[1]["envdoctor"]["holds"], false);
  EXPECT_EQ(r.results[2]["envdoctor"]["holds"], true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.text.find("error: tagged manylinux_2_30_x86_64 (held to manylinux_2_28_x86_64, the newest policy "
                        "auditwheel defines at or below it), but its files earn manylinux_2_31_x86_64: the symbol "
                        "versions GLIBC_2.29 (libm.so.6) are too new for it"),
            std::string::npos)
      << r.text;
}

// musl: the interpreter names the C library; musllinux policies by the same rules. auditwheel
// holds the files to one musllinux policy (this machine's musl, else the newest); a wheel's claim
// of another is held to that one.
TEST_F(WheelTag, MusllinuxByTheSameRules) {
  HandElf ok{true,
             false,
             EM_AARCH64,
             0,
             "libmusl.so",
             {"libc.musl-aarch64.so.1", "libz.so.1"},
             "/lib/ld-musl-aarch64.so.1",
             {{"deflate", "", ""}},
             {"f"}};
  HandElf bad = ok;
  bad.soname = "libmuslbad.so";
  bad.needed.push_back("libstdc++.so.6");
  std::string ok_file = hand_made("libmusl.so", ok), bad_file = hand_made("libmuslbad.so", bad);
  std::string expected = tag_by_the_data(spec_needs(ok, "aarch64", true));
  EXPECT_EQ(expected, musl_policy_here() + "_aarch64");
  std::string oldest = tag_by_the_data(spec_needs(ok, "aarch64", true), true);
  EXPECT_EQ(oldest, "musllinux_1_1_aarch64");
  TagRun r = wheel_tag({ok_file, bad_file, wheel_of(ok_file, "musllinux_1_2_aarch64"),
                        wheel_of(ok_file, "manylinux_2_17_aarch64", "glibcpkg"), wheel_of(ok_file, oldest, "oldest")},
                       false);
  EXPECT_EQ(r.results[0]["overall_tag"], expected);
  EXPECT_EQ(r.results[4]["envdoctor"]["holds"], true);
  EXPECT_EQ(r.results[0]["envdoctor"]["libc"], "musl");
  EXPECT_EQ(r.results[1]["overall_tag"], tag_by_the_data(spec_needs(bad, "aarch64", true)));
  EXPECT_EQ(r.results[1]["overall_tag"], "linux_aarch64");
  EXPECT_EQ(r.results[2]["envdoctor"]["holds"], true);
  EXPECT_EQ(r.results[3]["envdoctor"]["holds"], false);
  EXPECT_EQ(r.status, 1);
}

}  // namespace
}  // namespace envdoctor::test
