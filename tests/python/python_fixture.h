// Helpers for the python stage's tests: building real wheels with the committed builder script
// and finding the interpreters this machine has.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "support/fixture.h"

namespace envdoctor::test {

inline std::string make_wheel_script() {
  return std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/data/python/make_wheel.py";
}

// Builds a wheel from `spec` (see make_wheel.py) into `out_dir` and returns its path.
inline std::string make_wheel(const std::string& out_dir, nlohmann::json spec) {
  spec["out"] = out_dir;
  CommandResult r = run("python3 " + quote(make_wheel_script()) + " " + quote(spec.dump()));
  EXPECT_EQ(r.status, 0) << r.err;
  std::string path = r.out;
  while (!path.empty() && path.back() == '\n') path.pop_back();
  return path;
}

inline std::string pyenv_python(const std::string& version) {
  std::string p = "/root/.pyenv/versions/" + version + "/bin/python3";
  return fs::exists(p) ? p : std::string();
}

}  // namespace envdoctor::test
