// Machine outputs held to the JSON Schemas that ship with the tool (data/schemas/, installed
// as share/envdoctor/schemas/; docs/json.md), with Debian's python3-jsonschema as the referee
// (tests/support/validate_schema.py). The end-to-end tests pass what they already produce.
#pragma once

#include <stdexcept>
#include <string>

#include "support/fixture.h"
#include "support/shared_fixture.h"

namespace envdoctor::test {

inline std::string schema_path(const std::string& name) {
  return std::string(ENVDOCTOR_SOURCE_DIR) + "/data/schemas/" + name + ".schema.json";
}

// Debian's python3-jsonschema, for /usr/bin/python3 (asked once a ctest run). Without it nothing
// is validated here, and Schemas.ValidatorIsInstalled (tests/docs) is the test that reports the
// skip.
inline bool have_jsonschema() {
  static const bool available = [] {
    std::string answer = shared_fixture("jsonschema", [](const TempDir&) {
                           return run("/usr/bin/python3 -c 'import jsonschema'").status == 0 ? "yes" : "no";
                         }).record;
    if (answer != "yes" && answer != "no") throw std::runtime_error("the jsonschema record says '" + answer + "'");
    return answer == "yes";
  }();
  return available;
}

// "" when `document` holds to the schema at `schema_file`, else jsonschema's errors. One
// validator process (validate_schema.py --serve) answers every document of a test process, which
// may have dozens: each process of its own would spend a sixth of a second importing jsonschema.
std::string schema_file_errors(const std::string& schema_file, const std::string& document);

// "" when `document` holds to data/schemas/NAME.schema.json, else jsonschema's errors.
inline std::string schema_errors(const std::string& name, const std::string& document) {
  return schema_file_errors(schema_path(name), document);
}

inline void expect_schema_valid(const std::string& name, const std::string& document) {
  if (!have_jsonschema()) return;
  std::string errors = schema_errors(name, document);
  EXPECT_EQ(errors, "") << "not a valid " << name << " document (" << schema_path(name) << "):\n" << document;
}

}  // namespace envdoctor::test
