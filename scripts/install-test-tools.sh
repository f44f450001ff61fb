#!/usr/bin/env bash
# The tests' Python tools and their corpus of real wheels, from the Python package index, pinned
# by version and sha256 (tests/requirements/). Run by scripts/install-deps.sh --test; safe to run
# again: with everything present it asks no registry.
#
#   CACHE/tools/    a venv of the tests (never the user's Python) with tools.txt installed
#                   (`pip install --require-hashes`): uv, auditwheel, the MCP Python SDK, jsonschema.
#                   Made anew when tools.txt changes (CACHE/tools/requirements.sha256).
#   CACHE/wheels/   every wheel of corpus.txt (`pip download --no-deps --require-hashes`), fetched
#                   once and kept: a change of corpus.txt fetches only the wheels it adds.
#
# CACHE is $ENVDOCTOR_TEST_CACHE, else $XDG_CACHE_HOME/envdoctor-tests, else ~/.cache/envdoctor-tests:
# outside the clone, so that a fresh clone on the same machine reuses it. The tests find it the
# same way (tests/fixtures/referees.h). Where the index cannot be reached, what could not be had is
# said here, and the tests that need it skip with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."

cache="${ENVDOCTOR_TEST_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/envdoctor-tests}"
requirements=tests/requirements
python="${PYTHON:-python3}"
mkdir -p "$cache"
# One installer at a time (two clones, or make test beside make bench).
exec 9>"$cache/.install.lock"
flock 9

status=0
tools_sum=$(sha256sum "$requirements/tools.txt" | cut -d' ' -f1)
if [[ "$(cat "$cache/tools/requirements.sha256" 2>/dev/null)" != "$tools_sum" ]]; then
  echo "install-test-tools: the tests' tools into $cache/tools (tests/requirements/tools.txt)" >&2
  rm -rf "$cache/tools"
  # Made in place: a venv's scripts name its interpreter by path.
  if "$python" -m venv "$cache/tools" &&
    "$cache/tools/bin/python" -m pip install -q --disable-pip-version-check --no-input \
      --require-hashes --only-binary=:all: -r "$requirements/tools.txt"; then
    echo "$tools_sum" >"$cache/tools/requirements.sha256"
  else
    echo "install-test-tools: could not install the tests' tools (no index?); the tests that need them skip" >&2
    rm -rf "$cache/tools"
    status=1
  fi
fi

# The corpus: only the wheels not yet in the cache are asked for (pip download would ask the index
# for every requirement even when its file is there).
missing=$("$python" - "$requirements/corpus.txt" "$cache/wheels" <<'EOF'
import re, sys, pathlib
lock, have = pathlib.Path(sys.argv[1]).read_text(), pathlib.Path(sys.argv[2])
names = {p.name.split("-")[0].lower() + "-" + p.name.split("-")[1] for p in have.glob("*.whl")} if have.is_dir() else set()
for block in re.split(r"\n(?=\S)", lock):
    m = re.match(r"([A-Za-z0-9._-]+)==(\S+)", block)
    if m and re.sub(r"[-_.]+", "_", m[1]).lower() + "-" + m[2] not in names:
        print(block.rstrip())
EOF
)
if [[ -n "$missing" ]]; then
  count=$(grep -c '==' <<<"$missing")
  echo "install-test-tools: fetching $count wheels of tests/requirements/corpus.txt into $cache/wheels" >&2
  mkdir -p "$cache/wheels"
  if ! "$python" -m pip download -q --disable-pip-version-check --no-input --no-deps --require-hashes \
    --only-binary=:all: -d "$cache/wheels" -r /dev/stdin <<<"$missing"; then
    echo "install-test-tools: could not fetch the corpus (no index?); the tests that need it skip" >&2
    status=1
  fi
fi
exit $status
