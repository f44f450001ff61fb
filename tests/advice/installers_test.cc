// Real installations, judged by the authority that installed them and fixed in its own words:
// Debian's /usr/bin/python3 (dpkg), a --system-site-packages venv with a pip-installed wheel on
// top, a conda-layout prefix (conda-meta/*.json) and a uv-installed distribution; and files the
// loader rejects, each compared with the message ctypes.CDLL gets from the real dlopen.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <fstream>
#include <map>
#include <random>
#include <set>

#include "fixtures/venv.h"

namespace envdoctor::test {
namespace {

using nlohmann::json;

json check_json(const std::string& python, int* status) {
  CommandResult r = run(quote(envdoctor()) + " check --json --python " + quote(python));
  *status = r.status;
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  return json::parse(r.out.empty() ? "{}" : r.out);
}

// The referee for a distro Python: every extension module under `site` imported for real, by its
// module name, in one interpreter; the failures whose message is the loader's (dlopen's), by file.
std::map<std::string, std::string> real_import_failures(const std::string& python, const std::string& site,
                                                        const TempDir& tmp) {
  std::string script = tmp.write("import_all.py", R"(
import importlib, importlib.machinery, json, os, sys
site = sys.argv[1]
out = {}
for root, dirs, files in os.walk(site):
    dirs[:] = sorted(d for d in dirs if d.isidentifier())
    for f in sorted(files):
        suffix = next((s for s in importlib.machinery.EXTENSION_SUFFIXES if f.endswith(s)), None)
        if not suffix:
            continue
        path = os.path.join(root, f)
        module = os.path.relpath(path, site)[:-len(suffix)].replace('/', '.')
        if not all(p.isidentifier() for p in module.split('.')):
            continue
        try:
            importlib.import_module(module)
        except ImportError as e:
            words = str(e)
            if ('cannot open shared object file' in words or 'undefined symbol' in words or
                    "version `" in words or words.startswith(path + ': ')):
                out[path] = words
        except Exception:
            pass  # a Python-level failure of the module's own code: not the loader's
print(json.dumps(out))
)");
  CommandResult r = run("cd / && timeout 600 " + quote(python) + " " + quote(script) + " " + quote(site));
  EXPECT_EQ(r.status, 0) << r.err.substr(0, 2000);
  std::map<std::string, std::string> out;
  if (r.status == 0)
    for (auto& [k, v] : json::parse(r.out).items()) out[k] = v;
  return out;
}

bool have_debian_torch() {
  return have_tool("dpkg") && fs::exists("/usr/bin/python3") &&
         run("dpkg -s python3-torch python3-numpy python3-scipy python3-yaml >/dev/null 2>&1").status == 0;
}

// Debian's own Python with python3-torch, -numpy, -scipy, -yaml: envdoctor's errors are exactly
// the real import failures (none here), Debian's upstream RECORDs are not held against it, a
// program torch ships is a program, owned by python3-torch, and fixes speak apt-get.
TEST(Installers, DistroPythonErrorsAreTheRealImportFailures) {
  if (!have_debian_torch()) GTEST_SKIP() << "needs Debian's python3 with python3-torch, -numpy, -scipy, -yaml";
  TempDir tmp;
  int status = -1;
  json report = check_json("/usr/bin/python3", &status);
  EXPECT_EQ(report["environment"]["installer"], "debian");
  std::set<std::string> predicted;
  for (const json& f : report["findings"]) {
    if (f["severity"] == "error") predicted.insert(f["file"].get<std::string>());
    // Never pip for what apt installed.
    if (f.value("installer", "") == "debian") {
      EXPECT_EQ(f["hint"].get<std::string>().find("pip install"), std::string::npos) << f.dump();
    }
    if (f["code"] == "program-will-not-start") {
      EXPECT_EQ(f["severity"], "warning");
      std::string program = f["file"];
      // The referee: run it; ld.so's first line is the finding's message.
      CommandResult ran = run("timeout 20 " + quote(program) + " --help </dev/null");
      std::string first = ran.err.substr(0, ran.err.find('\n'));
      EXPECT_EQ(f["message"], first) << program;
      EXPECT_EQ(f["installer"], "debian") << f.dump();
      EXPECT_NE(f["package"], nullptr) << f.dump();
      // Issue 9: the hint says it is a program, that imports do not care, and what it lacks:
      // "torch/bin/test_jit is a program, not a module: ...; it will not start because
      // libjitbackend_test.so is not shipped by torch".
      std::string rel = program.substr(program.find("dist-packages/") + 14);
      std::string hint = f["hint"];
      EXPECT_EQ(hint.rfind(rel + " is a program, not a module: Python never loads it, so imports are unaffected; " +
                               "it will not start because ",
                           0),
                0u)
          << f.dump();
      const std::string loading = "error while loading shared libraries: ";
      if (size_t at = first.find(loading); at != std::string::npos && f["package"].is_string()) {
        std::string library =
            first.substr(at + loading.size(), first.find(':', at + loading.size()) - at - loading.size());
        EXPECT_TRUE(hint.ends_with(library + " is not shipped by " + f["package"].get<std::string>())) << f.dump();
      }
    }
  }
  std::set<std::string> failed;
  for (auto& [path, words] : real_import_failures("/usr/bin/python3", "/usr/lib/python3/dist-packages", tmp))
    failed.insert(path);
  EXPECT_EQ(predicted, failed) << report.dump(1);
  EXPECT_EQ(status, failed.empty() ? 0 : 1);
}

// A file under dist-packages that no RECORD lists is owned by the Debian package dpkg says, in
// `why` as in `check`.
TEST(Installers, DpkgOwnsWhatRecordsDoNotList) {
  if (!have_debian_torch() || !fs::exists("/usr/lib/python3/dist-packages/torch/bin/test_jit"))
    GTEST_SKIP() << "needs python3-torch's test_jit";
  CommandResult r =
      run(quote(envdoctor()) + " why --python /usr/bin/python3 /usr/lib/python3/dist-packages/torch/bin/test_jit");
  EXPECT_NE(r.out.find("python3-torch"), std::string::npos) << r.out << r.err;
}

// A --system-site-packages venv on Debian's Python, with a wheel pip installed: the wheel's
// damage is pip's to fix, Debian's packages keep Debian's words.
TEST(Installers, PipWheelOnTopOfDebian) {
  if (!have_debian_torch() || !have_tool("gcc") || !python3_facts().pip)
    GTEST_SKIP() << "needs Debian's python3 packages, gcc and pip";
  TempDir tmp;
  fs::create_directories(tmp / "wheels");
  std::string lib = tmp / "build/libpipped.so";
  build_shared(lib, "int pipped(void) { return 1; }", "-Wl,-soname,libpipped.so", tmp);
  std::string wheel = make_wheel(tmp / "wheels", {{"name", "pipped"},
                                                  {"version", "1.0"},
                                                  {"tag", "py3-none-manylinux_2_17_x86_64"},
                                                  {"purelib", false},
                                                  {"paths", {{"pipped/libpipped.so", lib}}}});
  ASSERT_EQ(run("python3 -m venv --system-site-packages --without-pip " + quote(tmp / "v")).status, 0);
  std::string python = tmp / "v/bin/python";
  CommandResult pip = run("python3 -m pip --python " + quote(python) +
                          " install --no-index --no-deps --disable-pip-version-check -q " + quote(wheel));
  ASSERT_EQ(pip.status, 0) << pip.err;
  std::string site = run(quote(python) + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'").out;
  site.pop_back();
  fs::remove(site + "/pipped/libpipped.so");
  int status = -1;
  json report = check_json(python, &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(report["environment"]["installer"], "pip");
  bool pipped = false;
  for (const json& f : report["findings"]) {
    if (f["package"] == "pipped") {
      pipped = true;
      EXPECT_EQ(f["code"], "record-missing-file");
      EXPECT_EQ(f["installer"], "pip");
      // The environment's interpreter is named, and the wheel pip installed it from (direct_url.json)
      // is what it installs again: pasted anywhere, it fixes this environment.
      std::string fix = f["fix_command"];
      EXPECT_TRUE(fix.ends_with(" install --force-reinstall --no-deps " + wheel)) << fix;
      EXPECT_NE(fix.find(python), std::string::npos) << fix;
    } else {
      EXPECT_NE(f["severity"], "error") << f.dump();
      if (f.value("installer", "") == "debian") {
        EXPECT_EQ(f.value("fix_command", "").find("pip install"), std::string::npos) << f.dump();
      }
    }
  }
  EXPECT_TRUE(pipped) << report.dump(1);
}

std::string sha256_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(bytes.data(), bytes.size(), d, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += std::string{hex[d[i] >> 4], hex[d[i] & 15]};
  return out;
}

// A conda-layout prefix written from conda's documented format (conda-meta/NAME-VER-BUILD.json
// with "files" and "paths_data"; the .dist-info's INSTALLER says conda), and a uv-installed
// distribution beside it: deleting or altering a file gives the finding, and the fix is that
// installer's command for this environment.
TEST(Installers, CondaAndUvSpeakTheirOwnCommands) {
  if (!have_tool("gcc") || !have_tool("python3")) GTEST_SKIP() << "needs gcc and python3";
  TempDir tmp;
  Venv venv(tmp, "env");
  std::string prefix = tmp / "env";
  std::string site = venv.site();
  std::string rel_site = fs::relative(site, prefix).string();
  // conda's package "condalib" 2.0 (build 0), whose Python distribution is "CondaLib".
  build_shared(site + "/condalib/_native.so", "int native(void) { return 2; }", "-Wl,-soname,_native.so", tmp);
  tmp.write("env/" + rel_site + "/CondaLib-2.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: CondaLib\nVersion: 2.0\n");
  tmp.write("env/" + rel_site + "/CondaLib-2.0.dist-info/INSTALLER", "conda\n");
  tmp.write("env/" + rel_site + "/CondaLib-2.0.dist-info/RECORD", "condalib/_native.so,,\n");
  json files = json::array(), paths = json::array();
  for (const std::string& f : {rel_site + "/condalib/_native.so", rel_site + "/CondaLib-2.0.dist-info/METADATA"}) {
    files.push_back(f);
    paths.push_back({{"_path", f},
                     {"path_type", "hardlink"},
                     {"sha256", sha256_hex(prefix + "/" + f)},
                     {"size_in_bytes", fs::file_size(prefix + "/" + f)}});
  }
  json record = {{"name", "condalib"},
                 {"version", "2.0"},
                 {"build", "0"},
                 {"files", files},
                 {"paths_data", {{"paths_version", 1}, {"paths", paths}}}};
  tmp.write("env/conda-meta/condalib-2.0-0.json", record.dump());
  // uv's "uvpkg" 3.0: a .dist-info whose INSTALLER is uv and whose RECORD has sizes.
  build_shared(site + "/uvpkg/_uv.so", "int uv(void) { return 3; }", "-Wl,-soname,_uv.so", tmp);
  tmp.write("env/" + rel_site + "/uvpkg-3.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: uvpkg\nVersion: 3.0\n");
  tmp.write("env/" + rel_site + "/uvpkg-3.0.dist-info/INSTALLER", "uv\n");
  tmp.write("env/" + rel_site + "/uvpkg-3.0.dist-info/RECORD",
            "uvpkg/_uv.so,sha256=x," + std::to_string(fs::file_size(site + "/uvpkg/_uv.so")) + "\n");

  int status = -1;
  json clean = check_json(venv.python(), &status);
  EXPECT_EQ(status, 0) << clean.dump(1);
  EXPECT_EQ(clean["environment"]["installer"], "conda");
  for (const json& f : clean["findings"]) ADD_FAILURE() << f.dump();  // one installation, not two owners

  fs::remove(site + "/condalib/_native.so");
  std::ofstream(site + "/uvpkg/_uv.so", std::ios::app) << "tail";
  json broken = check_json(venv.python(), &status);
  EXPECT_EQ(status, 1);
  bool conda = false, uv = false;
  for (const json& f : broken["findings"]) {
    if (f["code"] == "record-missing-file" && f["file"] == site + "/condalib/_native.so") {
      conda = true;
      EXPECT_EQ(f["package"], "condalib");
      EXPECT_EQ(f["installer"], "conda");
      EXPECT_EQ(f["fix_command"], "conda install -p " + prefix + " --force-reinstall condalib=2.0");
    }
    if (f["code"] == "record-size-mismatch" && f["file"] == site + "/uvpkg/_uv.so") {
      uv = true;
      EXPECT_EQ(f["installer"], "uv");
      EXPECT_EQ(f["fix_command"], "uv pip install --python " + venv.python() + " --reinstall --no-deps uvpkg==3.0");
    }
    EXPECT_EQ(f.value("fix_command", "").find("pip install --force"), std::string::npos) << f.dump();
  }
  EXPECT_TRUE(conda) << broken.dump(1);
  EXPECT_TRUE(uv) << broken.dump(1);
}

// Files that Python would import as extension modules, damaged in the ways open_verify and
// _dl_map_object_from_fd tell apart: each finding's message is exactly what ctypes.CDLL (the real
// dlopen) says, and the two the loader accepts (absurd section headers) give no finding.
TEST(Installers, RejectedFilesInTheLoadersWords) {
  if (!have_tool("gcc") || !have_tool("python3")) GTEST_SKIP() << "needs gcc and python3";
  TempDir tmp;
  Venv venv(tmp, "v");
  std::string good = tmp / "build/good.so";
  build_shared(good, "int good(void) { return 1; }", "", tmp);
  std::ifstream in(good, std::ios::binary);
  std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(base.size(), 64u);
  auto patched = [&](size_t off, std::string bytes) {
    std::string b = base;
    b.replace(off, bytes.size(), bytes);
    return b;
  };
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  std::mt19937 random(9);
  std::string tail = base.substr(0, 64);
  for (int i = 0; i < 4000; ++i) tail += static_cast<char>(random() & 0xff);
  std::map<std::string, std::string> files = {
      {"one", "\x7f"},
      {"four",
       "\x7f"
       "ELF"},
      {"sixtythree", base.substr(0, 63)},
      {"class32", patched(4, "\x01")},
      {"bigendian", patched(5, "\x02")},
      {"identversion", patched(6, std::string(1, '\0'))},
      {"osabi", patched(7, "\x09")},
      {"randomtail", tail},
      {"phoff", patched(0x20, le(1ull << 62, 8))},
      {"phnum", patched(0x38, le(0xffff, 2))},
      {"shoff", patched(0x28, le(1ull << 62, 8))},
      {"shnum", patched(0x3c, le(0xffff, 2))},
      {"text", std::string(200, 'x')},
  };
  std::string site = venv.site();
  for (const auto& [name, bytes] : files)
    std::ofstream(site + "/" + name + (name == "one" ? ".so" : ext_suffix()), std::ios::binary) << bytes;
  int status = -1;
  json report = check_json(venv.python(), &status);
  std::map<std::string, std::string> predicted;
  for (const json& f : report["findings"]) predicted[f["file"]] = f["message"];
  for (const auto& [name, bytes] : files) {
    std::string path = site + "/" + name + (name == "one" ? ".so" : ext_suffix());
    CommandResult r =
        run("python3 -c " +
            quote("import ctypes, sys\ntry:\n    ctypes.CDLL(sys.argv[1])\nexcept OSError as e:\n    print(e)") + " " +
            quote(path));
    std::string referee = r.out.empty() ? "" : r.out.substr(0, r.out.size() - 1);
    if (referee.empty()) {
      EXPECT_FALSE(predicted.count(path)) << name << ": the loader accepts it, envdoctor said " << predicted[path];
    } else {
      EXPECT_EQ(predicted[path], referee) << name;
    }
  }
  EXPECT_EQ(status, 1);
}

}  // namespace
}  // namespace envdoctor::test
