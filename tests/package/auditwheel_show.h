// The real `auditwheel show --json` as the referee of `envdoctor wheel-tag --json`: auditwheel
// 6.8.1 from the tests' venv (tests/requirements/tools.txt, support/referees.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "support/fixture.h"
#include "support/referees.h"

namespace envdoctor::test {

// What `auditwheel show --json --allow-pure-python-wheel WHEEL` prints, on one line as
// `wheel-tag --json` prints it: the same keys in the same order, every character outside ASCII
// escaped as Python's json module escapes it (auditwheel indents by four spaces; wheel-tag gives
// each FILE one line). "" with `why` set when the pinned auditwheel is not installed, or when it
// printed no document (`why` then holds its stderr).
inline std::string auditwheel_show_line(const std::string& wheel, std::string* why) {
  std::string auditwheel = pinned_tool("auditwheel", why);
  if (auditwheel.empty()) return "";
  CommandResult r = run(quote(auditwheel) + " show --json --allow-pure-python-wheel " + quote(wheel));
  nlohmann::ordered_json document = nlohmann::ordered_json::parse(r.out, nullptr, false);
  if (document.is_discarded()) {
    *why = "auditwheel show printed no document (status " + std::to_string(r.status) + "):\n" + r.err;
    return "";
  }
  return document.dump(-1, ' ', true) + "\n";
}

}  // namespace envdoctor::test
