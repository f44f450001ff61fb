// `envdoctor wheel-tag --json` against the real `auditwheel show --json` (auditwheel 6.8.1, the
// tests' pinned referee), wheel by wheel: every wheel of the corpus of real wheels
// (tests/requirements/corpus.txt: torch, NVIDIA's CUDA wheels, CuPy, JAX, ONNX Runtime, ...) and
// auditwheel's own test wheels (tests/fixtures/data/auditwheel/). For each, the document wheel-tag prints
// is the one auditwheel prints, key for key and value for value, in auditwheel's order; and it
// holds to auditwheel's show-schema.json, which allows no member it does not name.
//
// auditwheel extracts each wheel whole before it reads it, wheel-tag reads the members in place:
// the corpus's 55 tests (5 GB of wheels) take about four minutes on two busy cores, torch's 38 s,
// two thirds of it auditwheel's. Each wheel is a test of its own; one that is not in the tests'
// cache, or an auditwheel that is not installed, is skipped with the referee's reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "fixtures/auditwheel_show.h"
#include "fixtures/fixture.h"
#include "fixtures/referees.h"
#include "fixtures/schema.h"

namespace envdoctor::test {
namespace auditwheel_show_test {

using nlohmann::json;

const std::string kSource = ENVDOCTOR_SOURCE_DIR;

// The distributions of corpus.txt, as it names them.
std::vector<std::string> corpus_distributions() {
  std::vector<std::string> out;
  std::ifstream in(kSource + "/tests/requirements/corpus.txt");
  std::regex pin(R"(^([A-Za-z0-9][A-Za-z0-9._-]*)==)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, pin)) out.push_back(m[1]);
  return out;
}

// tests/fixtures/data/auditwheel's wheels, relative to it.
std::vector<std::string> auditwheel_test_wheels() {
  std::vector<std::string> out;
  std::error_code ec;
  fs::path dir = kSource + "/tests/fixtures/data/auditwheel";
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().extension() == ".whl") out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// The wheel's --json line is auditwheel's document, and valid against auditwheel's own schema.
void expect_what_auditwheel_shows(const std::string& wheel) {
  std::string why;
  std::string expected = auditwheel_show_line(wheel, &why);
  if (expected.empty()) GTEST_SKIP() << why;
  CommandResult r = run(quote(envdoctor()) + " wheel-tag --json " + quote(wheel));
  EXPECT_NE(r.status, 2) << r.err;
  EXPECT_EQ(r.out, expected) << wheel;
  if (have_jsonschema()) {
    EXPECT_EQ(schema_file_errors(kSource + "/data/auditwheel/show-schema.json", r.out), "") << r.out;
    expect_schema_valid("wheel-tag", r.out);
  }
}

class CorpusWheel : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusWheel, WheelTagPrintsWhatAuditwheelShowPrints) {
  std::string why;
  std::string wheel = corpus_wheel(GetParam(), &why);
  if (wheel.empty()) GTEST_SKIP() << why;
  expect_what_auditwheel_shows(wheel);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusWheel, ::testing::ValuesIn(corpus_distributions()),
                         [](const auto& info) { return test_name(info.param); });

class AuditwheelTestWheel : public ::testing::TestWithParam<std::string> {};

// auditwheel's own test wheels; and envdoctor's document carries the same document for each.
TEST_P(AuditwheelTestWheel, WheelTagPrintsWhatAuditwheelShowPrints) {
  std::string wheel = kSource + "/tests/fixtures/data/auditwheel/" + GetParam();
  expect_what_auditwheel_shows(wheel);
  CommandResult line = run(quote(envdoctor()) + " wheel-tag --json " + quote(wheel));
  CommandResult own = run(quote(envdoctor()) + " wheel-tag --json=envdoctor " + quote(wheel));
  EXPECT_EQ(own.status, line.status) << own.err;
  expect_schema_valid("wheel-tag-envdoctor", own.out);
  json doc = json::parse(own.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << own.out;
  EXPECT_EQ(doc["files"][0]["auditwheel"], json::parse(line.out, nullptr, false)) << own.out;
}

INSTANTIATE_TEST_SUITE_P(Auditwheel, AuditwheelTestWheel, ::testing::ValuesIn(auditwheel_test_wheels()),
                         [](const auto& info) { return test_name(info.param); });

// The schema file of --json is auditwheel's show-schema.json itself.
TEST(WheelTagSchema, IsAuditwheelsShowSchema) {
  EXPECT_EQ(slurp(schema_path("wheel-tag")), slurp(kSource + "/data/auditwheel/show-schema.json"));
  json own = json::parse(slurp(schema_path("wheel-tag-envdoctor")));
  json auditwheel = json::parse(slurp(kSource + "/data/auditwheel/show-schema.json"));
  for (const auto& [name, def] : auditwheel["$defs"].items()) EXPECT_EQ(own["$defs"][name], def) << name;
  EXPECT_EQ(own["$defs"]["auditwheel"]["oneOf"], auditwheel["oneOf"]);
}

}  // namespace auditwheel_show_test
}  // namespace envdoctor::test
