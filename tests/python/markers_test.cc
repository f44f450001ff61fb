#include "python/markers.h"

#include <nlohmann/json.hpp>

#include "fixtures/fixture.h"
#include "python/interpreter.h"
#include "python/version.h"

namespace envdoctor::python {
namespace {

const MarkerEnvironment kLinux311 = {{"implementation_name", "cpython"},
                                     {"implementation_version", "3.11.7"},
                                     {"os_name", "posix"},
                                     {"platform_machine", "x86_64"},
                                     {"platform_python_implementation", "CPython"},
                                     {"platform_release", "6.1.0-13-amd64"},
                                     {"platform_system", "Linux"},
                                     {"platform_version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1"},
                                     {"python_full_version", "3.11.7"},
                                     {"python_version", "3.11"},
                                     {"sys_platform", "linux"}};

struct MarkerCase {
  const char* marker;
  bool expected;
  std::vector<std::string> extras = {};
};

TEST(Markers, Table) {
  const MarkerCase cases[] = {
      {"python_version >= '3.8'", true},
      {"python_version < '3.9'", false},
      {"python_version >= '3.10'", true},  // a version comparison: 3.11 > 3.10, though "3.11" < "3.9"
      {"python_version > '3.9'", true},
      {"python_version == '3.11.*'", true},
      {"python_version != '3.11'", false},
      {"python_version ~= '3.8'", true},
      {"python_full_version ~= '3.11.0'", true},
      {"python_full_version ~= '3.10.0'", false},
      {"python_full_version === '3.11.7'", true},
      {"python_full_version <= '3.11.7'", true},
      {"python_full_version < '3.11.7'", false},
      {"'3.11' <= python_version", true},
      {"sys_platform == 'linux'", true},
      {"sys_platform == \"win32\"", false},
      {"sys_platform != 'win32' and platform_machine == 'x86_64'", true},
      {"platform_system == 'Windows' or platform_system == 'Darwin'", false},
      {"(os_name == 'nt' or os_name == 'posix') and python_version >= '3'", true},
      {"os_name == 'nt' or (os_name == 'posix' and (python_version < '3' or implementation_name == 'cpython'))", true},
      {"'linux' in sys_platform", true},
      {"'win' not in sys_platform", true},
      {"'Debian' in platform_version", true},
      {"platform_machine in 'x86_64 aarch64'", true},
      {"platform_machine not in 'x86_64 aarch64'", false},
      {"platform_release >= '5'", true},  // "6.1.0-13-amd64" is no version: string order
      {"platform_python_implementation == 'PyPy'", false},
      {"implementation_version >= '3.11'", true},
      {"os.name == 'posix'", true},  // PEP 345 spelling
      {"extra == 'cuda'", false},
      {"extra != 'cuda'", true},
      {"extra == 'cuda'", true, {"cuda"}},
      {"extra == 'CUDA_12'", true, {"cuda-12"}},  // PEP 685 normalization
      {"extra == 'cuda' and python_version >= '3.9'", true, {"docs", "cuda"}},
      {"extra == 'cuda'", false, {"docs"}},
  };
  for (const MarkerCase& c : cases) {
    std::string error;
    auto m = Marker::parse(c.marker, &error);
    ASSERT_TRUE(m) << c.marker << ": " << error;
    EXPECT_EQ(m->evaluate(kLinux311, c.extras), c.expected) << c.marker;
  }
}

TEST(Markers, SyntaxErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"python_version >=", "expected a marker variable or a quoted string at ''"},
      {"python_version >= '3.8' and", "expected a marker variable or a quoted string at ''"},
      {"pythonversion >= '3.8'", "expected a marker variable or a quoted string at 'pythonversion >= '3.8''"},
      {"(python_version >= '3.8'", "expected ')' at ''"},
      {"python_version >= '3.8", "unterminated string at ''3.8'"},
      {"python_version is '3.8'", "expected a marker operator at 'is '3.8''"},
      {"python_version >= '3.8' xor 1", "unexpected text at 'xor 1'"},
  };
  for (const auto& [marker, expected] : cases) {
    std::string error;
    EXPECT_FALSE(Marker::parse(marker, &error)) << marker;
    EXPECT_EQ(error, expected) << marker;
  }
}

TEST(Requirements, Parse) {
  std::string error;
  auto r = parse_requirement("Torch[cuda, Extra_2] (>=2.1,<3) ; python_version >= \"3.9\" and extra == 'gpu'", &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->name, "Torch");
  EXPECT_EQ(r->extras, (std::vector<std::string>{"cuda", "Extra_2"}));
  EXPECT_EQ(r->specifier, ">=2.1,<3");
  EXPECT_EQ(r->marker_text, "python_version >= \"3.9\" and extra == 'gpu'");
  EXPECT_FALSE(r->applies(kLinux311));
  EXPECT_TRUE(r->applies(kLinux311, {"gpu"}));

  r = parse_requirement("nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"", &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(r->specifier, "==9.1.0.70");
  EXPECT_TRUE(r->applies(kLinux311));

  r = parse_requirement("pip @ https://example.org/pip-23.0-py3-none-any.whl ; sys_platform == 'linux'", &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->url, "https://example.org/pip-23.0-py3-none-any.whl");
  EXPECT_EQ(r->specifier, "");

  r = parse_requirement("numpy", &error);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->marker);
  EXPECT_TRUE(r->applies(kLinux311));

  EXPECT_FALSE(parse_requirement("-bad", &error));
  EXPECT_EQ(error, "bad project name in '-bad'");
  EXPECT_FALSE(parse_requirement("foo >>1", &error));
  EXPECT_EQ(error, "bad version specifier '>>1' in 'foo >>1'");
  EXPECT_FALSE(parse_requirement("foo; python_version >", &error));
  EXPECT_EQ(error, "bad marker: expected a marker variable or a quoted string at '' in 'foo; python_version >'");
  EXPECT_FALSE(parse_requirement("foo[bar", &error));
}

TEST(Requirements, FilteredForTheEnvironment) {
  std::vector<Requirement> all;
  for (const char* line : {"a", "b; python_version < '3.8'", "c; extra == 'test'", "d; sys_platform == 'linux'"}) {
    std::string error;
    all.push_back(*parse_requirement(line, &error));
  }
  std::vector<std::string> names;
  for (const Requirement& r : applicable_requirements(all, kLinux311)) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "d"}));
  names.clear();
  for (const Requirement& r : applicable_requirements(all, kLinux311, {"test"})) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c", "d"}));
}

TEST(Versions, OrderingFollowsPep440) {
  const char* ordered[] = {"1.0.dev0",  "1.0a1",       "1.0a2.dev1",     "1.0a2",     "1.0b1", "1.0rc1", "1.0",
                           "1.0+local", "1.0+local.7", "1.0.post1.dev0", "1.0.post1", "1.1",   "1!0.1"};
  for (size_t i = 0; i + 1 < std::size(ordered); i++) {
    auto a = Version::parse(ordered[i]), b = Version::parse(ordered[i + 1]);
    ASSERT_TRUE(a && b) << ordered[i] << " " << ordered[i + 1];
    EXPECT_LT(compare(*a, *b), 0) << ordered[i] << " < " << ordered[i + 1];
  }
  EXPECT_EQ(compare(*Version::parse("1.0"), *Version::parse("1.0.0")), 0);
  EXPECT_EQ(Version::parse("V1.0-ALPHA-1")->str(), "1.0a1");
  EXPECT_EQ(Version::parse("1.0-1")->str(), "1.0.post1");
  EXPECT_EQ(Version::parse("2.1.0+cu121")->str(), "2.1.0+cu121");
  EXPECT_FALSE(Version::parse("6.1.0-13-amd64"));
  EXPECT_FALSE(Version::parse("linux"));
}

TEST(Versions, SpecifierClauses) {
  auto holds = [](const char* candidate, const char* spec) {
    auto clauses = parse_specifier(spec);
    EXPECT_TRUE(clauses) << spec;
    for (const SpecifierClause& c : *clauses)
      if (!satisfies(candidate, c)) return false;
    return true;
  };
  EXPECT_TRUE(holds("2.1.0+cu121", ">=2.1,<2.2"));
  EXPECT_TRUE(holds("2.1.0+cu121", "==2.1.0"));
  EXPECT_FALSE(holds("2.1.0", "==2.1.0+cu121"));
  EXPECT_FALSE(holds("3.0a1", "<3.0"));  // "<V" does not admit V's own pre-releases
  EXPECT_TRUE(holds("3.0a1", "<3.0a2"));
  EXPECT_FALSE(holds("1.0.post1", ">1.0"));  // nor ">V" its post-releases
  EXPECT_TRUE(holds("1.0.post2", ">1.0.post1"));
  EXPECT_TRUE(holds("1.4.5", "~=1.4.2"));
  EXPECT_FALSE(holds("1.5", "~=1.4.2"));
  EXPECT_TRUE(holds("12.4.127", "==12.*"));
  EXPECT_FALSE(holds("13.0", "==12.*"));
  EXPECT_TRUE(holds("13.0", "!=12.*"));
  EXPECT_FALSE(parse_specifier("~=1"));
  EXPECT_FALSE(parse_specifier(">=1.*"));
  EXPECT_FALSE(parse_specifier(">=1,"));
  EXPECT_TRUE(parse_specifier("")->empty());
}

// The referee: packaging's own marker evaluation, in the interpreter of this machine.
TEST(Markers, AgreeWithPackagingOnThisInterpreter) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  std::vector<std::string> markers = {"python_version >= '3.10'",
                                      "python_version < '3.9'",
                                      "python_full_version >= '3.11.0'",
                                      "platform_machine == 'x86_64'",
                                      "sys_platform == 'linux' and implementation_name == 'cpython'",
                                      "'linux' in sys_platform",
                                      "platform_system != 'Windows'",
                                      "python_version == '3.*'",
                                      "implementation_version ~= '3.11.0'",
                                      "platform_python_implementation == 'CPython'",
                                      "extra == 'a'",
                                      "os_name == 'posix' or python_version < '2.7'"};
  nlohmann::json list = markers;
  test::CommandResult r =
      test::run("python3 -c " +
                test::quote("import json,sys\nfrom pip._vendor.packaging.markers import Marker\n"
                            "print(json.dumps([Marker(m).evaluate({'extra': ''}) for m in json.loads(sys.argv[1])]))") +
                " " + test::quote(list.dump()));
  if (r.status != 0) GTEST_SKIP() << "pip's packaging not importable: " << r.err;
  std::vector<bool> expected = nlohmann::json::parse(r.out).get<std::vector<bool>>();
  std::string error;
  auto env = discover_interpreter({"python3"}, &error);
  ASSERT_TRUE(env) << error;
  for (size_t i = 0; i < markers.size(); i++)
    EXPECT_EQ(Marker::parse(markers[i], &error)->evaluate(env->markers), expected[i]) << markers[i];
}

}  // namespace
}  // namespace envdoctor::python
