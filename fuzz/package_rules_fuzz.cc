// libFuzzer target for the reader of data/package_loads.json (environment/package_rules.h), the
// table that says what packages open by themselves (TransformerEngine's search among them): any
// bytes as the table, read as JSON and then as rules, which must name the first field that is
// wrong or give rules whose every step, place and condition is one of the format's.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "environment/package_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  std::string error;
  std::optional<envdoctor::environment::PackageRules> rules = envdoctor::environment::PackageRules::parse(doc, &error);
  size_t sink = error.size();
  if (rules)
    for (const envdoctor::environment::PackageRule& r : rules->rules) sink += r.steps.size() + r.id.size();
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
