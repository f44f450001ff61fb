#!/usr/bin/env bash
# Times `envdoctor pip install X` against `pip install X` on the benchmark environment
# (bench/make_env.py, about 2,000 ELF files under real RECORDs, given its own pip), X a small wheel
# from a local wheelhouse; and the parts: pip's dry run with its report (what envdoctor asks pip
# first) and `check --with X.whl` (envdoctor's own work: the environment read, checked, changed in
# memory and checked again). envdoctor's own time is `envdoctor pip` minus pip's two runs.
#
#   bash bench/pip.sh [ENVDOCTOR] [RUNS]
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$py" -m ensurepip >/dev/null
mkdir "$work/wheels"
wheel=$(python3 "$here/../tests/data/python/make_wheel.py" \
  "{\"out\": \"$work/wheels\", \"name\": \"benchleaf\", \"version\": \"1.0\", \"files\": {\"benchleaf/__init__.py\": \"x = 1\\n\"}}")
echo "environment: $("$envdoctor" check --python "$py" | head -1)"
echo
index="--no-index --find-links $work/wheels --disable-pip-version-check -q"
undo="$py -m pip uninstall -y -q benchleaf"
hyperfine --style none --warmup 1 --runs "$runs" -i --export-markdown "$work/pip.md" \
  --prepare "$undo" -n "pip install benchleaf" "$py -m pip install $index benchleaf" \
  --prepare "$undo" -n "envdoctor pip install benchleaf" "$envdoctor pip --python $py install $index benchleaf" \
  --prepare "$undo" -n "pip install --dry-run --report - (envdoctor's first pip run)" \
  "$py -m pip install --dry-run --quiet --report - --only-binary=:all: $index benchleaf" \
  --prepare "$undo" -n "check --with benchleaf-1.0-py3-none-any.whl (envdoctor's own work)" \
  "$envdoctor check --python $py --with $wheel" >/dev/null
cat "$work/pip.md"
