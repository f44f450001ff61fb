#include <openssl/evp.h>

#include <fstream>
#include <set>

#include "fixtures/python_fixture.h"
#include "python/distribution.h"
#include "python/metadata_file.h"
#include "python/ownership.h"
#include "python/wheel.h"

namespace envdoctor::python {
namespace {

using nlohmann::json;
using test::TempDir;

std::vector<u8> sha256_of_file(const fs::path& path) {
  std::string text = *read_bounded_file(path, 1 << 20, nullptr);
  std::vector<u8> out(32);
  unsigned len = 0;
  EVP_Digest(text.data(), text.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

std::vector<std::string> names_of(const std::vector<const Distribution*>& owners) {
  std::vector<std::string> out;
  for (const Distribution* d : owners) out.push_back(d->name);
  return out;
}

// One venv, four wheels, real pip: what pip wrote is what the inventory must report.
TEST(Inventory, WheelsInstalledByPipIntoARealVenv) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  TempDir tmp;
  std::string venv = tmp / "venv";
  test::CommandResult r = test::run("python3 -m venv --without-pip " + test::quote(venv));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string wheels = tmp / "wheels";
  fs::create_directories(wheels);
  std::vector<std::string> paths = {
      test::make_wheel(wheels, {{"name", "Alpha_Pkg"},
                                {"version", "1.0"},
                                {"requires",
                                 {"numpy>=1; python_version >= '3.8'", "pytest; extra == 'test'",
                                  "pywin32; sys_platform == 'win32'"}},
                                {"files",
                                 {{"alpha/__init__.py", "X = 1\n"},
                                  {"alpha/lib/libalpha.so.1", "ELF?"},
                                  {"Alpha_Pkg-1.0.data/scripts/alpha-tool", "#!python\nprint(1)\n"},
                                  {"Alpha_Pkg-1.0.data/headers/alpha.h", "int alpha;\n"},
                                  {"Alpha_Pkg-1.0.data/data/share/alpha/README", "hi\n"}}}}),
      test::make_wheel(wheels, {{"name", "nvidia-cudnn-cu12"},
                                {"version", "9.1.0.70"},
                                {"files", {{"nvidia/__init__.py", ""}, {"nvidia/cudnn/lib/libcudnn.so.9", "cu12"}}}}),
      test::make_wheel(wheels, {{"name", "nvidia-cudnn-cu13"},
                                {"version", "9.13.0.50"},
                                {"files", {{"nvidia/__init__.py", ""}, {"nvidia/cudnn/lib/libcudnn.so.9", "cu13"}}}}),
      test::make_wheel(wheels, {{"name", "nvidia-npp-cu13"}, {"version", "0.0.0a0"}, {"files", json::object()}}),
  };
  std::string install = "python3 -m pip --python " + test::quote(venv + "/bin/python") +
                        " install --quiet --no-index --no-deps --disable-pip-version-check";
  for (const std::string& p : paths) install.append(" ").append(test::quote(p));
  r = test::run(install);
  if (r.status != 0 && r.err.find("no such option: --python") != std::string::npos)
    GTEST_SKIP() << "pip older than 22.3";
  ASSERT_EQ(r.status, 0) << r.err;

  std::string error;
  auto env = discover_interpreter({venv + "/bin/python"}, &error);
  ASSERT_TRUE(env) << error;
  fs::path site = env->paths.purelib;
  EXPECT_EQ(site, fs::path(venv) / ("lib/python" + env->version_info.short_str()) / "site-packages");
  std::vector<std::string> sites = env->site_dirs();
  ASSERT_NE(std::find(sites.begin(), sites.end(), site.string()), sites.end());

  Inventory inv = read_inventory(*env);
  EXPECT_TRUE(inv.problems.empty()) << inv.problems[0];
  std::vector<std::string> found;
  for (const Distribution& d : inv.distributions)
    if (d.site_dir == site) found.push_back(d.name + " " + d.version + " " + d.installer);
  EXPECT_EQ(found, (std::vector<std::string>{"Alpha_Pkg 1.0 pip", "nvidia-cudnn-cu12 9.1.0.70 pip",
                                             "nvidia-cudnn-cu13 9.13.0.50 pip", "nvidia-npp-cu13 0.0.0a0 pip"}));
  const Distribution* alpha = inv.find("alpha-pkg");
  ASSERT_TRUE(alpha);
  EXPECT_EQ(alpha->kind, Distribution::kDistInfo);
  for (const Distribution& d : inv.distributions)
    if (d.site_dir == site) {
      EXPECT_TRUE(d.problems.empty()) << d.name << ": " << d.problems[0];
    }

  // Requires-Dist for this interpreter.
  std::vector<std::string> reqs;
  for (const Requirement& q : alpha->requirements_for(env->markers)) reqs.push_back(q.name);
  EXPECT_EQ(reqs, (std::vector<std::string>{"numpy"}));
  EXPECT_EQ(alpha->requirements_for(env->markers, {"test"}).size(), 2u);

  // The records name exactly the files pip put on disk: everything under site-packages and
  // the script in bin/.
  std::set<std::string> on_disk, recorded;
  for (const auto& e : fs::recursive_directory_iterator(site))
    if (e.is_regular_file()) on_disk.insert(e.path().string());
  on_disk.insert(venv + "/bin/alpha-tool");
  on_disk.insert(venv + "/share/alpha/README");
  on_disk.insert(venv + "/include/site/python" + env->version_info.short_str() + "/Alpha-Pkg/alpha.h");
  for (const Distribution& d : inv.distributions)
    if (d.site_dir == site)
      for (const RecordEntry& e : d.record) recorded.insert(e.resolved.string());
  EXPECT_EQ(recorded, on_disk);

  // Hashes decode to the bytes of the file (pip rewrote the script's shebang and rehashed it).
  for (const RecordEntry& e : alpha->record) {
    if (e.digest.empty()) continue;
    EXPECT_EQ(e.digest, sha256_of_file(e.resolved)) << e.path;
    EXPECT_EQ(e.size, fs::file_size(e.resolved)) << e.path;
  }

  // The wheel reader's plan is where pip put each file (pip adds INSTALLER, REQUESTED,
  // direct_url.json and the bytecode).
  auto wheel = Wheel::open(paths[0], &error);
  ASSERT_TRUE(wheel) << error;
  std::set<std::string> planned, pip_wrote;
  for (const RecordEntry& e : wheel->as_installed(install_scheme(*env, wheel->filename().project())).record)
    planned.insert(e.resolved.string());
  for (const RecordEntry& e : alpha->record) {
    std::string name = e.resolved.filename().string();
    if (name != "INSTALLER" && name != "REQUESTED" && name != "direct_url.json" && !name.ends_with(".pyc"))
      pip_wrote.insert(e.resolved.string());
  }
  EXPECT_EQ(planned, pip_wrote);

  // Ownership: the file two wheels install, the script, the placeholder.
  OwnershipIndex owners(inv.distributions);
  fs::path cudnn = site / "nvidia/cudnn/lib/libcudnn.so.9";
  EXPECT_EQ(names_of(owners.owners(cudnn)), (std::vector<std::string>{"nvidia-cudnn-cu12", "nvidia-cudnn-cu13"}));
  EXPECT_EQ(names_of(owners.owners(fs::path(venv) / "bin/alpha-tool")), (std::vector<std::string>{"Alpha_Pkg"}));
  EXPECT_TRUE(owners.owners(site / "nothing.so").empty());
  std::string pyc = "nvidia/__pycache__/__init__.cpython-" + std::to_string(env->version_info.major) +
                    std::to_string(env->version_info.minor) + ".pyc";
  EXPECT_EQ(owners.shared_paths(), (std::vector<fs::path>{site / "nvidia/__init__.py", site / pyc, cudnn}));
  // venv's lib64 -> lib link: the same file by another spelling.
  fs::path via_lib64 =
      fs::path(venv) / ("lib64/python" + env->version_info.short_str()) / "site-packages/alpha/__init__.py";
  if (fs::is_symlink(fs::path(venv) / "lib64")) {
    EXPECT_EQ(names_of(owners.owners(via_lib64)), (std::vector<std::string>{"Alpha_Pkg"}));
  }

  EXPECT_TRUE(inv.find("nvidia_npp_cu13")->metadata_only());
  EXPECT_FALSE(inv.find("nvidia-cudnn-cu13")->metadata_only());

  // DESIGN problem 1: uninstalling either cudnn deletes the file the other still lists.
  r = test::run("python3 -m pip --python " + test::quote(venv + "/bin/python") +
                " uninstall --quiet -y --disable-pip-version-check nvidia-cudnn-cu12");
  ASSERT_EQ(r.status, 0) << r.err;
  Inventory after = read_inventory(*env);
  const Distribution* cu13 = after.find("nvidia-cudnn-cu13");
  ASSERT_TRUE(cu13);
  EXPECT_FALSE(after.find("nvidia-cudnn-cu12"));
  auto listed =
      std::find_if(cu13->record.begin(), cu13->record.end(), [&](const RecordEntry& e) { return e.resolved == cudnn; });
  EXPECT_NE(listed, cu13->record.end());
  EXPECT_FALSE(fs::exists(cudnn));
}

// A file that two distributions list by different spellings, one through a directory link: a
// third spelling finds both owners, in inventory order, and a link-free spelling of a file no link
// reaches finds its own owner only.
TEST(Inventory, OwnersThroughADirectoryLinkAreMergedInInventoryOrder) {
  TempDir tmp;
  fs::path real = tmp / "real", link = tmp / "link", other = tmp / "other";
  fs::create_directories(real);
  std::ofstream(real / "libshared.so.1") << "x";
  std::ofstream(real / "libown.so.1") << "x";
  fs::create_directory_symlink(real, link);
  fs::create_directory_symlink(real, other);
  std::vector<Distribution> distributions(3);
  auto lists = [](Distribution& d, const std::string& name, const fs::path& path) {
    d.name = name;
    RecordEntry e;
    e.path = path.filename().string();
    e.resolved = path;
    d.record.push_back(e);
  };
  lists(distributions[0], "via-link", link / "libshared.so.1");
  lists(distributions[1], "plain", real / "libshared.so.1");
  lists(distributions[2], "own", real / "libown.so.1");
  OwnershipIndex owners(distributions);
  EXPECT_EQ(names_of(owners.owners(other / "libshared.so.1")), (std::vector<std::string>{"via-link", "plain"}));
  EXPECT_EQ(names_of(owners.owners(fs::path(other / "libown.so.1"))), (std::vector<std::string>{"own"}));
  EXPECT_EQ(names_of(owners.owners(link / "libown.so.1")), (std::vector<std::string>{"own"}));
  EXPECT_TRUE(owners.owners(other / "libnone.so.1").empty());
}

TEST(Inventory, EggInfoRequiresSections) {
  EXPECT_EQ(
      egg_requires_to_pep508("six\n\n[cuda]\ncupy>=12\n\n[:python_version < \"3.8\"]\nimportlib-metadata\n"
                             "[test:sys_platform == \"linux\"]\npytest\n"),
      (std::vector<std::string>{"six", "cupy>=12; extra == \"cuda\"", "importlib-metadata; python_version < \"3.8\"",
                                "pytest; (sys_platform == \"linux\") and extra == \"test\""}));
}

TEST(Inventory, EggInfoCondaAndHostileDirectories) {
  TempDir tmp;
  fs::path prefix = tmp.path();
  fs::path site = prefix / "lib/python3.11/site-packages";
  tmp.write("lib/python3.11/site-packages/Legacy.egg-info/PKG-INFO",
            "Metadata-Version: 1.1\nName: Legacy\nVersion: 0.9\nSummary: a\n  folded summary\n\nbody\n");
  tmp.write("lib/python3.11/site-packages/Legacy.egg-info/requires.txt", "six\n[gpu]\ncupy\n");
  tmp.write("lib/python3.11/site-packages/Legacy.egg-info/installed-files.txt",
            "../legacy/__init__.py\nPKG-INFO\n../../../../bin/legacy\n../../../../../etc/x\n");
  tmp.write("lib/python3.11/site-packages/single-1.0-py3.11.egg-info", "Name: single\nVersion: 1.0\n");
  tmp.write("lib/python3.11/site-packages/broken-2.0.dist-info/RECORD", "a.py,,\n../../../../../x,,\n");
  tmp.write("lib/python3.11/site-packages/notadir-1.0.dist-info", "");
  fs::create_symlink("loop-1.0.dist-info", site / "loop-1.0.dist-info");
  tmp.write("conda-meta/zlib-1.3-h4.json",
            R"({"name": "zlib", "version": "1.3", "files": ["lib/libz.so.1"],
                "paths_data": {"paths": [{"_path": "lib/libz.so.1", "sha256": ")" +
                std::string(64, 'a') + R"(", "size_in_bytes": 100}, {"_path": "../escape"}]}})");
  tmp.write("conda-meta/bad-1.0-0.json", "{not json");
  tmp.write("conda-meta/history", "");

  PythonEnvironment env;
  env.prefix = prefix.string();
  env.sys_path = {"", site.string(), (prefix / "missing").string()};
  Inventory inv = read_inventory(env);
  EXPECT_EQ(inv.problems,
            (std::vector<std::string>{(site / "loop-1.0.dist-info").string() + ": Too many levels of symbolic links",
                                      (site / "notadir-1.0.dist-info").string() + ": not a directory"}));
  std::vector<std::string> found;
  for (const Distribution& d : inv.distributions) {
    std::string line = d.name + " " + d.version + " [" + std::to_string(d.record.size()) + " files]";
    for (const std::string& p : d.problems) line += " | " + p;
    found.push_back(line);
  }
  EXPECT_EQ(
      found,
      (std::vector<std::string>{
          "Legacy 0.9 [4 files] | installed-files.txt line 4: path '../../../../../etc/x' escapes the environment prefix " +
              prefix.string(),
          "broken 2.0 [2 files] | METADATA: No such file or directory | RECORD line 2: path '../../../../../x' "
          "escapes the environment prefix " +
              prefix.string(),
          "single 1.0 [0 files]",
          "bad 1.0 [0 files] | bad-1.0-0.json: not a JSON object",
          "zlib 1.3 [2 files] | zlib-1.3-h4.json: file '../escape' lies outside the prefix",
      }));
  const Distribution* legacy = inv.find("legacy");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->kind, Distribution::kEggInfo);
  EXPECT_EQ(legacy->record[0].resolved, site / "legacy/__init__.py");
  EXPECT_EQ(legacy->record[2].resolved, prefix / "bin/legacy");
  ASSERT_EQ(legacy->requires_dist.size(), 2u);
  EXPECT_EQ(legacy->requires_dist[1].marker_text, "extra == \"gpu\"");
  const Distribution* zlib = inv.find("zlib");
  ASSERT_TRUE(zlib);
  EXPECT_EQ(zlib->kind, Distribution::kConda);
  EXPECT_EQ(zlib->record[0].resolved, prefix / "lib/libz.so.1");
  EXPECT_EQ(zlib->record[0].hash_algorithm, "sha256");
  EXPECT_EQ(zlib->record[0].digest, std::vector<u8>(32, 0xaa));
  EXPECT_EQ(zlib->record[0].size, 100u);
  OwnershipIndex owners(inv.distributions);
  EXPECT_EQ(names_of(owners.owners(prefix / "lib/libz.so.1")), (std::vector<std::string>{"zlib"}));
}

TEST(Inventory, InstallRoot) {
  EXPECT_EQ(install_root_for("/v/lib/python3.11/site-packages", "/v"), "/v");
  EXPECT_EQ(install_root_for("/home/u/.local/lib/python3.11/site-packages", "/v"), "/home/u/.local");
  EXPECT_EQ(install_root_for("/opt/extra", "/v"), "/opt/extra");
}

}  // namespace
}  // namespace envdoctor::python
