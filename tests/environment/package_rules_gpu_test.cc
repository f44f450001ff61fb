// Three parts of data/package_loads.json's format that bitsandbytes' rule needs (docs/package-loads.md),
// read by the parser and held to the schema alike: the `gpu` condition (the node has an NVIDIA GPU,
// or none), a variable's value that must match a regex (`BNB_CUDA_VERSION`, digits only), and the
// package's own directory as a place (`{"package": "."}`). What the engine does with them is held to
// the real bitsandbytes in tests/real/bitsandbytes_rule_test.cc.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "environment/package_rules.h"
#include "fixtures/schema.h"

namespace envdoctor::test::package_rules_gpu {

using environment::Condition;
using environment::PackageRules;
using environment::Place;
using environment::ValueSource;
using nlohmann::json;

json table_of(const json& rule) {
  return {{"schema", 1}, {"sources", {{"S", "a source"}}}, {"rules", json::array({rule})}};
}

// A rule of one step, `when` and `values` as given.
json rule_with(const json& when, const json& values) {
  json rule = json::parse(R"({"id": "r", "package": ["p"], "moment": "import", "what": "w", "source": "S",
                              "steps": [{"names": ["libp_{v}.so"], "places": [{"package": "."}]}]})");
  rule["steps"][0]["when"] = when;
  rule["values"] = values;
  return rule;
}

const json kDigits = json::parse(R"({"v": [{"variable": "P_VERSION", "match": "^(\\d+)$"}]})");

std::string error_of(const json& doc) {
  std::string error;
  EXPECT_FALSE(PackageRules::parse(doc, &error)) << doc.dump();
  return error;
}

bool schema_refuses(const json& doc) {
  return have_jsonschema() && !schema_errors("package-loads", doc.dump()).empty();
}

TEST(PackageRulesGpu, TheGpuConditionAVariablesMatchAndThePackagesOwnDirectoryAreRead) {
  for (bool gpu : {true, false}) {
    json doc = table_of(rule_with({{"all", {{{"gpu", gpu}}, {{"not", {{"gpu", !gpu}}}}}}}, kDigits));
    EXPECT_FALSE(schema_refuses(doc)) << doc.dump();
    std::string error;
    std::optional<PackageRules> rules = PackageRules::parse(doc, &error);
    ASSERT_TRUE(rules) << error;
    const environment::Step& s = rules->rules[0].steps[0];
    ASSERT_TRUE(s.when);
    ASSERT_EQ(s.when->parts.size(), 2u);
    EXPECT_EQ(s.when->parts[0].kind, Condition::Kind::kGpu);
    EXPECT_EQ(s.when->parts[0].set, gpu);
    EXPECT_EQ(s.when->parts[1].parts[0].set, !gpu);
    const std::vector<ValueSource>* v = rules->rules[0].value("v");
    ASSERT_TRUE(v);
    EXPECT_EQ((*v)[0].kind, ValueSource::Kind::kVariable);
    EXPECT_EQ((*v)[0].name, "P_VERSION");
    EXPECT_EQ((*v)[0].match, "^(\\d+)$");
    EXPECT_EQ(s.places[0].kind, Place::Kind::kPackage);
    EXPECT_EQ(s.places[0].dirs, std::vector<std::string>{"."});
  }
  // A variable without `match` keeps its whole value.
  json plain = table_of(rule_with({{"gpu", true}}, json::parse(R"({"v": [{"variable": "P_VERSION"}]})")));
  std::string error;
  std::optional<PackageRules> rules = PackageRules::parse(plain, &error);
  ASSERT_TRUE(rules) << error;
  EXPECT_EQ((*rules->rules[0].value("v"))[0].match, "");
}

TEST(PackageRulesGpu, AGpuThatIsNoBooleanAndAMatchThatIsNoRegexAreRefused) {
  json doc = table_of(rule_with({{"gpu", "yes"}}, kDigits));
  EXPECT_EQ(error_of(doc), "rule r: steps[0].when.gpu: not true or false");
  EXPECT_EQ(schema_refuses(doc), have_jsonschema());

  doc = table_of(rule_with({{"gpu", true}, {"set", true}}, kDigits));
  EXPECT_NE(error_of(doc).find("rule r: steps[0].when"), std::string::npos);
  EXPECT_EQ(schema_refuses(doc), have_jsonschema());

  doc = table_of(rule_with({{"gpu", true}}, json::parse(R"({"v": [{"variable": "P_VERSION", "match": "(\\d+"}]})")));
  EXPECT_EQ(error_of(doc).rfind("rule r: values.v[0].match: not an ECMAScript regular expression", 0), 0u)
      << error_of(doc);

  doc = table_of(rule_with({{"gpu", true}}, json::parse(R"({"v": [{"variable": "P_VERSION", "package": "p"}]})")));
  EXPECT_NE(error_of(doc).find("rule r: values.v[0]"), std::string::npos);
  EXPECT_EQ(schema_refuses(doc), have_jsonschema());
}

}  // namespace envdoctor::test::package_rules_gpu
