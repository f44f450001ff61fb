// Editable installs read without running them (python/editable.h): site.py's reading of a .pth
// file, setuptools' finder module as its template writes it, the `editables` bootstrap, which
// files import reaches below a project's root, and the inventory's roots for each shape. The real
// installs (pip install -e, setup.py develop) and their imports are tests/checks/editable_test.cc.
#include "python/editable.h"

#include "fixtures/python_fixture.h"
#include "python/distribution.h"
#include "python/ownership.h"

namespace envdoctor::python {
namespace {

using test::TempDir;

// setuptools 81's _finder_template, as `pip install -e .` of a flat layout writes it (the body
// cut after the dictionaries).
constexpr const char* kFinder81 =
    "from __future__ import annotations\n"
    "import sys\n"
    "from importlib.machinery import ModuleSpec, PathFinder\n\n"
    "MAPPING: dict[str, str] = {'foo': '/tmp/p/foo', '_fast': '/tmp/p/_fast', 'ns.sub': '/tmp/p/ns/sub'}\n"
    "NAMESPACES: dict[str, list[str]] = {'ns': ['/tmp/p/ns']}\n"
    "PATH_PLACEHOLDER = '__editable__.foo-0.1.finder' + \".__path_hook__\"\n\n"
    "class _EditableFinder:  # MetaPathFinder\n"
    "    @classmethod\n"
    "    def find_spec(cls, fullname: str, path=None, target=None) -> ModuleSpec | None:  # type: ignore\n"
    "        if fullname in MAPPING:\n";

TEST(Editable, PthLinesAsSiteReadsThem) {
  PthLines lines = parse_pth(
      "# a comment\n"
      "/tmp/p/src   \n"
      "\n"
      "../rel\r\n"
      "import __editable___foo_0_1_finder; __editable___foo_0_1_finder.install()\n"
      "import\tsys\n"
      "importlib\n",
      "/v/lib/python3.11/site-packages");
  EXPECT_EQ(lines.dirs, (std::vector<std::string>{"/tmp/p/src", "/v/lib/python3.11/rel",
                                                  "/v/lib/python3.11/site-packages/importlib"}));
  ASSERT_EQ(lines.imports.size(), 2u);
  EXPECT_EQ(imported_module(lines.imports[0]), "__editable___foo_0_1_finder");
  EXPECT_EQ(imported_module(lines.imports[1]), "sys");
  EXPECT_EQ(imported_module("import os, sys"), "os");
  EXPECT_EQ(imported_module("import 1x"), "");
}

TEST(Editable, SetuptoolsFinderMappingAndNamespaces) {
  FinderMapping f;
  ASSERT_TRUE(parse_setuptools_finder(kFinder81, &f));
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(f.mapping, (Pairs{{"foo", "/tmp/p/foo"}, {"_fast", "/tmp/p/_fast"}, {"ns.sub", "/tmp/p/ns/sub"}}));
  ASSERT_EQ(f.namespaces.size(), 1u);
  EXPECT_EQ(f.namespaces[0].first, "ns");
  EXPECT_EQ(f.namespaces[0].second, std::vector<std::string>{"/tmp/p/ns"});
  // setuptools 64 and 65 write the names without annotations; repr() escapes what it must.
  ASSERT_TRUE(parse_setuptools_finder(
      "MAPPING = {'caf\\xe9': \"/p/it's\", 'b': '/p/a\\\\b'}\nNAMESPACES = {}\nPATH_PLACEHOLDER = 'x'\n", &f));
  EXPECT_EQ(f.mapping, (Pairs{{"caf\xc3\xa9", "/p/it's"}, {"b", "/p/a\\b"}}));
  EXPECT_TRUE(f.namespaces.empty());
}

TEST(Editable, HostileFinderIsNotGuessed) {
  FinderMapping f;
  EXPECT_FALSE(parse_setuptools_finder("", &f));
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'foo': '/p/foo'", &f));     // cut short
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'foo': '/p/foo\n'}", &f));  // a newline in a string
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'foo': compute()}", &f));   // not a literal
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'foo': '\\x0'}", &f));      // a short escape
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'foo': '\\x00'}", &f));     // a NUL
  EXPECT_FALSE(parse_setuptools_finder("MAPPING = {'a': 'b' 'c': 'd'}", &f));  // no comma
  EXPECT_FALSE(parse_setuptools_finder(std::string("MAPPING = {'") + std::string(1 << 16, 'a'), &f));
  EXPECT_TRUE(parse_setuptools_finder("MAPPING = {'a': 'b',}", &f));  // a trailing comma
}

TEST(Editable, EditablesBootstrapMapModuleCalls) {
  auto mapped = parse_editables_bootstrap(
      "from editables.redirector import RedirectingFinder as F\n"
      "F.install()\n"
      "F.map_module('foo', '/tmp/p/foo/__init__.py')\n"
      "F.map_module('bar', 'relative.py')\n"
      "F.map_module('baz', '/tmp/p/baz.py'\n");
  ASSERT_EQ(mapped.size(), 1u);
  EXPECT_EQ(mapped[0], (std::pair<std::string, std::string>{"foo", "/tmp/p/foo/__init__.py"}));
}

// setuptools' build/lib.* copies and build/temp.* objects lie below directories that are no
// identifiers: import never reaches them from the project's root.
TEST(Editable, ImportReachesPackagesOnly) {
  ImportRoot path{ImportRoot::kPath, "/p", "", ""};
  EXPECT_TRUE(imports_from(path, "/p/foo/_ext.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_TRUE(imports_from(path, "/p/lib/libmylib.so"));
  EXPECT_TRUE(imports_from(path, "/p/_top.so"));
  EXPECT_FALSE(imports_from(path, "/p/build/lib.linux-x86_64-cpython-311/foo/_ext.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_FALSE(imports_from(path, "/p/build/temp.linux-x86_64-cpython-311/foo/_ext.o"));
  EXPECT_FALSE(imports_from(path, "/p/.venv/lib/libx.so"));
  EXPECT_FALSE(imports_from(path, "/p2/foo/x.so"));
  EXPECT_FALSE(imports_from(path, "/p"));
  ImportRoot module{ImportRoot::kModule, "/p/_fast", "_fast", ""};
  EXPECT_TRUE(imports_from(module, "/p/_fast.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_FALSE(imports_from(module, "/p/_faster.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_FALSE(imports_from(module, "/p/_fast.d/x.so"));
  ImportRoot root{ImportRoot::kPath, "/", "", ""};
  EXPECT_TRUE(imports_from(root, "/foo/x.so"));
  EXPECT_FALSE(imports_from(root, "/x-y/x.so"));
}

// Each shape an installer leaves, written as it writes it, read into the distribution's roots; a
// file of the project is then owned by the distribution when import reaches it.
TEST(Editable, InventoryRootsOfEachShape) {
  TempDir tmp;
  std::string site = tmp / "v/lib/python3.11/site-packages";
  std::string proj = tmp / "proj";
  for (const char* d : {"foo", "src/bar", "develop/baz", "lib"})
    fs::create_directories(tmp / ("proj/" + std::string(d)));
  tmp.write("proj/develop/baz.egg-info/PKG-INFO", "Name: baz\nVersion: 3\n");
  // PEP 660, a finder (foo) and a path (bar, its src layout).
  tmp.write("v/lib/python3.11/site-packages/foo-0.1.dist-info/METADATA", "Name: foo\nVersion: 0.1\n");
  tmp.write("v/lib/python3.11/site-packages/foo-0.1.dist-info/RECORD",
            "__editable__.foo-0.1.pth,,\n__editable___foo_0_1_finder.py,,\nfoo-0.1.dist-info/RECORD,,\n");
  tmp.write("v/lib/python3.11/site-packages/__editable__.foo-0.1.pth",
            "import __editable___foo_0_1_finder; __editable___foo_0_1_finder.install()\n");
  tmp.write("v/lib/python3.11/site-packages/__editable___foo_0_1_finder.py",
            "MAPPING: dict[str, str] = {'foo': '" + proj + "/foo', '_fast': '" + proj + "/_fast'}\nNAMESPACES = {}\n");
  tmp.write("v/lib/python3.11/site-packages/bar-2.dist-info/METADATA", "Name: bar\nVersion: 2\n");
  tmp.write("v/lib/python3.11/site-packages/bar-2.dist-info/RECORD", "__editable__.bar-2.pth,,\n");
  tmp.write("v/lib/python3.11/site-packages/__editable__.bar-2.pth", proj + "/src\n" + proj + "/missing\n");
  // setup.py develop: baz.egg-link, and the .egg-info on sys.path through easy-install.pth.
  tmp.write("v/lib/python3.11/site-packages/baz.egg-link", proj + "/develop\n.");
  Inventory inv;
  inv.site_dirs = {site, proj + "/develop"};
  inv.distributions = scan_site_dir(site, tmp / "v", &inv.problems);
  for (Distribution& d : scan_site_dir(proj + "/develop", proj + "/develop", &inv.problems))
    inv.distributions.push_back(std::move(d));
  read_editable_installs(inv);
  EXPECT_TRUE(inv.problems.empty()) << inv.problems.front();
  auto roots_of = [&](const std::string& name) { return inv.find(name)->editable_roots; };
  std::string pth = site + "/__editable__.foo-0.1.pth", finder = site + "/__editable___foo_0_1_finder.py";
  EXPECT_EQ(roots_of("foo"), (std::vector<ImportRoot>{{ImportRoot::kPackage, proj + "/foo", "foo", finder},
                                                      {ImportRoot::kModule, proj + "/_fast", "_fast", finder}}));
  EXPECT_EQ(roots_of("bar"),
            (std::vector<ImportRoot>{{ImportRoot::kPath, proj + "/src", "", site + "/__editable__.bar-2.pth"}}));
  EXPECT_EQ(roots_of("baz"),
            (std::vector<ImportRoot>{{ImportRoot::kPath, proj + "/develop", "", site + "/baz.egg-link"}}));

  OwnershipIndex owners(inv.distributions);
  auto owner = [&](const std::string& path) {
    const auto& o = owners.owners(fs::path(path));
    return o.empty() ? std::string("-") : o.front()->name;
  };
  EXPECT_EQ(owner(proj + "/foo/_ext.cpython-311-x86_64-linux-gnu.so"), "foo");
  EXPECT_EQ(owner(proj + "/_fast.cpython-311-x86_64-linux-gnu.so"), "foo");
  EXPECT_EQ(owner(proj + "/lib/libmylib.so"), "-");  // the finder maps foo and _fast, not the tree
  EXPECT_EQ(owner(proj + "/src/bar/_b.so"), "bar");
  EXPECT_EQ(owner(proj + "/develop/baz/_z.so"), "baz");
  EXPECT_EQ(owner(proj + "/develop/build/lib.linux-x86_64-cpython-311/baz/_z.so"), "-");
  EXPECT_EQ(owner(site + "/__editable__.foo-0.1.pth"), "foo");  // its RECORD's
}

// Without direct_url.json's mark or setuptools' name, a .pth a wheel ships is its own business:
// no project is claimed. A .pth line that names a site directory claims none of its files.
TEST(Editable, OnlyEditableInstallsClaimDirectories) {
  TempDir tmp;
  std::string site = tmp / "v/lib/python3.11/site-packages";
  fs::create_directories(tmp / "other");
  tmp.write("v/lib/python3.11/site-packages/plain-1.dist-info/METADATA", "Name: plain\nVersion: 1\n");
  tmp.write("v/lib/python3.11/site-packages/plain-1.dist-info/RECORD", "plain.pth,,\n");
  tmp.write("v/lib/python3.11/site-packages/plain.pth", tmp / "other" + "\n");
  tmp.write("v/lib/python3.11/site-packages/ed-1.dist-info/METADATA", "Name: ed\nVersion: 1\n");
  tmp.write("v/lib/python3.11/site-packages/ed-1.dist-info/RECORD", "ed.pth,,\n");
  tmp.write("v/lib/python3.11/site-packages/ed-1.dist-info/direct_url.json",
            "{\"url\": \"file:///x\", \"dir_info\": {\"editable\": true}}");
  tmp.write("v/lib/python3.11/site-packages/ed.pth", site + "\nimport os; os.system('touch /tmp/pwned')\n");
  Inventory inv;
  inv.site_dirs = {site};
  inv.distributions = scan_site_dir(site, tmp / "v", &inv.problems);
  read_editable_installs(inv);
  EXPECT_TRUE(inv.find("plain")->editable_roots.empty());
  EXPECT_TRUE(inv.find("ed")->editable_roots.empty());
  ASSERT_EQ(inv.problems.size(), 1u);
  EXPECT_EQ(inv.problems[0], site +
                                 "/ed.pth: the import line of ed's editable install is not read ('import os; "
                                 "os.system('touch /tmp/pwned')'): the modules it makes importable are not checked");
}

}  // namespace
}  // namespace envdoctor::python
