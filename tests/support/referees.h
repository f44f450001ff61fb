// The tests' pinned referees from the Python package index (tests/requirements/): the real uv,
// auditwheel and the MCP Python SDK in a venv of the tests, and the corpus of real wheels, both
// put by scripts/install-test-tools.sh (make test runs it) in the tests' cache outside the clone.
#pragma once

#include <string>

namespace envdoctor::test {

// $ENVDOCTOR_TEST_CACHE, else $XDG_CACHE_HOME/envdoctor-tests, else ~/.cache/envdoctor-tests, as
// the install script finds it; read once, before any test moves XDG_CACHE_HOME.
const std::string& test_cache_dir();

// The tests' venv's program `name` (uv, auditwheel, python), or "" with `why` set to the skip
// reason when the tools are not installed.
std::string pinned_tool(const std::string& name, std::string* why);

// The corpus's wheel of `distribution` (its name as corpus.txt spells it, any case or separator),
// or "" with `why` set when it was not fetched.
std::string corpus_wheel(const std::string& distribution, std::string* why);

// The directory of the corpus's wheels (for `pip install --no-index --find-links`).
std::string corpus_dir();

}  // namespace envdoctor::test
