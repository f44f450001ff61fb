// Every parser of the python stage on hostile bytes: mutations of valid inputs and random
// noise, from a fixed seed so a failure reproduces. Passing means no crash, no hang, and (under
// ENVDOCTOR_SANITIZE) no out-of-bounds read.
#include <random>

#include "fixtures/fixture.h"
#include "python/interpreter.h"
#include "python/markers.h"
#include "python/metadata_file.h"
#include "python/record.h"
#include "python/version.h"
#include "python/wheel.h"

namespace envdoctor::python {
namespace {

class Mutator {
 public:
  explicit Mutator(u32 seed) : rng_(seed) {}

  std::string mutate(std::string s) {
    static const char kInteresting[] = ",\"\r\n\0'()[];=<>!~.-_*@ \t\\/";
    int edits = 1 + pick(6);
    for (int i = 0; i < edits; i++) {
      size_t at = s.empty() ? 0 : pick(static_cast<int>(s.size()));
      char c = pick(2) ? kInteresting[pick(sizeof(kInteresting) - 1)] : static_cast<char>(pick(256));
      switch (pick(4)) {
        case 0: s.insert(s.begin() + static_cast<long>(at), c); break;
        case 1:
          if (!s.empty()) s.erase(at, 1 + pick(4));
          break;
        case 2:
          if (!s.empty()) s[at] = c;
          break;
        case 3: s.insert(at, s.substr(at, pick(16))); break;
      }
    }
    return s;
  }

 private:
  int pick(int n) { return n <= 0 ? 0 : static_cast<int>(rng_() % static_cast<u32>(n)); }
  std::mt19937 rng_;
};

constexpr int kRounds = 3000;

TEST(Robustness, RecordAndCsv) {
  const std::string seed =
      "../../../bin/tool,sha256=AH99WaYGFa9_kdi5G8GAJjc9yu2SatELuVy7K_t_gQw,35\r\n"
      "\"a,b\"\"c\",,\npkg/x.py,sha256=mHUu4o1UhL3CgU-3CttqCy-zH2qbjueugf0vyc8wCzs,4\n";
  Mutator m(1);
  for (int i = 0; i < kRounds; i++) {
    std::string text = m.mutate(seed);
    std::vector<std::string> problems;
    auto entries = parse_record(text, RecordContext{"/v/lib/python3.11/site-packages", "/v"}, &problems);
    for (const RecordEntry& e : entries) EXPECT_TRUE(e.resolved.is_absolute());
    parse_csv(text, &problems, 16);
    parse_record_hash(text);
  }
}

TEST(Robustness, HeadersMarkersRequirementsVersions) {
  const std::string metadata = "Metadata-Version: 2.1\nName: x\n  folded\nRequires-Dist: a (>=1)\n\nbody";
  const std::string requirement =
      "Torch[cuda, x] (>=2.1,<3,!=2.2.*) ; (python_version >= \"3.9\" or os_name in 'posix') and extra == 'gpu'";
  const std::string version = "1!2.0.0rc1.post2.dev3+local.7";
  Mutator m(2);
  MarkerEnvironment env = {{"python_version", "3.11"}, {"os_name", "posix"}};
  for (int i = 0; i < kRounds; i++) {
    parse_headers(m.mutate(metadata));
    std::string error;
    if (auto r = parse_requirement(m.mutate(requirement), &error)) r->applies(env, {"gpu"});
    if (auto v = Version::parse(m.mutate(version))) {
      EXPECT_EQ(compare(*v, *v), 0);
      EXPECT_TRUE(Version::parse(v->str())) << v->str();
    }
    if (auto s = parse_specifier(m.mutate("~=1.4.2, !=1.5.*, <2")))
      for (const SpecifierClause& c : *s) satisfies(m.mutate("1.4.5"), c);
    normalize_name(m.mutate("Foo.Bar__baz"));
  }
}

TEST(Robustness, ProbeOutputAndWheelNames) {
  const std::string probe =
      R"({"version_info": [3, 11, 7, "final", 0], "path": ["", "/x"], "config": {"Py_DEBUG": 0},)"
      R"( "markers": {"python_version": "3.11"}, "libc": "glibc 2.36", "paths": {"purelib": "/p"}})";
  const std::string wheel = "flash_attn-2.5.0-1-cp310.cp311-cp311-manylinux_2_28_x86_64.whl";
  std::string error;
  // The inputs themselves parse, so the rounds below mutate something that is read.
  ASSERT_TRUE(parse_probe_output(probe, &error)) << error;
  auto original = WheelName::parse(wheel, &error);
  ASSERT_TRUE(original) << error;
  ASSERT_EQ(original->tags().size(), 2u);

  Mutator m(3);
  int probes_refused = 0, names_refused = 0;
  for (int i = 0; i < kRounds; i++) {
    // Either a result or a reason, never both and never neither.
    error.clear();
    std::optional<PythonEnvironment> env = parse_probe_output(m.mutate(probe), &error);
    if (!env) {
      EXPECT_FALSE(error.empty());
      ++probes_refused;
    }
    error.clear();
    std::string name = m.mutate(wheel);
    if (auto w = WheelName::parse(name, &error)) {
      // Every tag combination pip would accept the file under: the product of the tag sets.
      EXPECT_EQ(w->tags().size(), w->python_tags.size() * w->abi_tags.size() * w->platform_tags.size()) << name;
      EXPECT_FALSE(w->name.empty()) << name;
    } else {
      EXPECT_FALSE(error.empty()) << name;
      ++names_refused;
    }
  }
  // The mutations do reach the parsers' refusals.
  EXPECT_GT(probes_refused, 0);
  EXPECT_GT(names_refused, 0);
}

// Mutated bytes of a real wheel: libzip and the checks on top of it must refuse or read, never
// crash.
TEST(Robustness, CorruptWheels) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  test::TempDir tmp;
  test::CommandResult r = test::run(
      "python3 " + test::quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/fixtures/data/python/make_wheel.py") + " " +
      test::quote(
          R"({"out": ")" + tmp.path().string() +
          R"(", "name": "demo", "version": "1.0", "files": {"demo/__init__.py": "x = 1\n", "demo/a.so": "ELF"}})"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string original = *read_bounded_file(tmp.path() / "demo-1.0-py3-none-any.whl", 1 << 20, nullptr);
  Mutator m(4);
  int opened = 0;
  for (int i = 0; i < 300; i++) {
    std::string path = tmp.write("demo-1.0-py3-none-any.whl", m.mutate(original));
    std::string error;
    auto wheel = Wheel::open(path, &error);
    if (!wheel) continue;
    opened++;
    for (const WheelMember& member : wheel->members()) wheel->read(member.name, 1 << 20, &error);
    wheel->install_plan(InstallScheme{"/p", "/p", "/p/bin", "/p/include", "/p"});
  }
  EXPECT_GT(opened, 0);
}

}  // namespace
}  // namespace envdoctor::python
