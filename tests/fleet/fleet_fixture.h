// Environments for the snapshot, diff and fleet tests: real venvs with wheels built here (a
// gcc-built library and a CPython extension module linking it by RUNPATH), installed and
// removed with the real pip, so that every snapshot, diff and health-check line is about an
// environment whose imports a real Python can try.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/venv.h"

namespace envdoctor::test {

class FleetTest : public VenvTest {
 protected:
  // A wheel `name`-`version` with `name`/lib/lib<name>.so (SONAME lib<name>.so.1, returning
  // `value`) and the extension module `name`._core that links it through RUNPATH $ORIGIN/lib.
  std::string package_wheel(const std::string& name, const std::string& version, int value) {
    std::string build = tmp_ / ("build/" + name + "-" + version + "/" + name);
    std::string lib = build + "/lib/lib" + name + ".so";
    build_shared(lib, "int " + name + "_fn(void) { return " + std::to_string(value) + "; }",
                 "-Wl,-soname,lib" + name + ".so.1 -Wl,--build-id", tmp_);
    std::string ext = build + "/_core" + suffix_;
    build_ext(
        ext, "_core", "int " + name + "_fn(void);", name + "_fn()",
        "-L" + quote(build + "/lib") + " -l" + name + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -Wl,--build-id");
    return make_wheel(tmp_ / "wheels",
                      {{"name", name},
                       {"version", version},
                       {"tag", "cp311-cp311-linux_x86_64"},
                       {"purelib", false},
                       {"files", {{name + "/__init__.py", ""}}},
                       {"paths", {{name + "/lib/lib" + name + ".so.1", lib}, {name + "/_core" + suffix_, ext}}}});
  }

  // `envdoctor snapshot --python VENV ARGS` as JSON.
  nlohmann::json snapshot(const Venv& venv, const std::string& args = "") {
    CommandResult r = venv.envdoctor_run("snapshot", args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  }
  std::string save(const std::string& name, const std::string& text) { return tmp_.write(name, text); }
};

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace envdoctor::test
