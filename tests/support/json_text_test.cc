// support/json_text.h writes what nlohmann's dump writes, byte for byte: the referee is dump()
// itself, compact and indented, on documents with every kind of value and string.
#include "support/json_text.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace envdoctor::test {
namespace {

using nlohmann::json;

void expect_same(const json& value) {
  EXPECT_EQ(support::dump_json(value), value.dump());
  EXPECT_EQ(support::dump_json(value, 2), value.dump(2));
  EXPECT_EQ(support::dump_json(value, 0), value.dump(0));
  EXPECT_EQ(support::dump_json(value, 4), value.dump(4));
}

TEST(JsonText, EveryKindOfValue) {
  expect_same(nullptr);
  expect_same(true);
  expect_same(false);
  expect_same(0);
  expect_same(-1);
  expect_same(std::numeric_limits<int64_t>::min());
  expect_same(std::numeric_limits<uint64_t>::max());
  expect_same(0.1);
  expect_same(1e300);
  expect_same(-0.0);
  expect_same(json::object());
  expect_same(json::array());
  expect_same(json::parse(R"({"a": {}, "b": [], "c": [[], {}], "d": {"e": [1, {"f": null}]}})"));
}

TEST(JsonText, StringsThatNeedEscaping) {
  for (const std::string& s : std::vector<std::string>{
           "", "plain /path/lib.so", "quote \" here", "back\\slash", "tab\there", "new\nline",
           std::string("nul\0byte", 8), "\x01\x1f\x7f", "caf\xc3\xa9", "\xe2\x82\xac euro", "\xf0\x9f\x98\x80"}) {
    expect_same(s);
    expect_same(json{{s, s}});
    expect_same(json::array({s, json{{"k", s}}}));
  }
}

// Random documents shaped like a snapshot: nested objects and arrays of strings and numbers.
TEST(JsonText, RandomDocuments) {
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"lib", "so", "\xc3\xa9", "\"", "\\", "\n", " ", "/", "x86_64", "\t"};
  std::function<json(int)> make = [&](int depth) -> json {
    switch (depth <= 0 ? rng() % 4 : rng() % 6) {
      case 0: return nullptr;
      case 1: return static_cast<int64_t>(rng()) - (1LL << 31);
      case 2: {
        std::string s;
        for (unsigned n = rng() % 5; n > 0; --n) s += words[rng() % words.size()];
        return s;
      }
      case 3: return rng() % 2 == 0;
      case 4: {
        json o = json::object();
        for (unsigned n = rng() % 4; n > 0; --n) o[words[rng() % words.size()] + std::to_string(n)] = make(depth - 1);
        return o;
      }
      default: {
        json a = json::array();
        for (unsigned n = rng() % 4; n > 0; --n) a.push_back(make(depth - 1));
        return a;
      }
    }
  };
  for (int i = 0; i < 300; ++i) expect_same(make(5));
}

}  // namespace
}  // namespace envdoctor::test
