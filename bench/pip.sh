#!/usr/bin/env bash
# Times `envdoctor pip install X` against `pip install X` on the benchmark environment
# (bench/make_env.py, 2,000 ELF files under real RECORDs, given its own pip), X a small wheel
# from a local wheelhouse, uninstalled before each run; and pip's dry run with its report (the
# first thing envdoctor asks pip). envdoctor's own time is what `envdoctor pip` adds to pip's two
# runs: its median minus the medians of the install and the dry run (envdoctor checks the
# environment as it is while the dry run runs, so part of its work hides behind pip's).
# Medians, not means: the machine is shared. `check --with X.whl` (the same work without pip,
# nothing hidden) is timed too.
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
hyperfine --style none --warmup 1 --runs "$runs" -i --export-json "$work/pip.json" \
  --prepare "$undo" -n "pip install benchleaf" "$py -m pip install $index benchleaf" \
  --prepare "$undo" -n "envdoctor pip install benchleaf" "$envdoctor pip --python $py install $index benchleaf" \
  --prepare "$undo" -n "pip install --dry-run --report - (envdoctor's first pip run)" \
  "$py -m pip install --dry-run --quiet --report - --only-binary=:all: $index benchleaf" \
  --prepare "$undo" -n "check --with benchleaf-1.0-py3-none-any.whl (envdoctor's work, nothing hidden)" \
  "$envdoctor check --python $py --with $wheel" >/dev/null
python3 - "$work/pip.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print("| Command | Median [s] | Min [s] | Max [s] | user+sys [s] |")
print("|:---|---:|---:|---:|---:|")
for r in rows:
    print("| `%s` | %.3f | %.3f | %.3f | %.3f |" % (r["command"], r["median"], r["min"], r["max"], r["user"] + r["system"]))
pip, whole, dry = (rows[i]["median"] for i in range(3))
print()
print("envdoctor's own time (median of envdoctor pip - medians of pip install and of the dry run): %.3f s" % (whole - pip - dry))
print("envdoctor pip install / pip install (medians): %.2fx" % (whole / pip))
print("floor of that ratio, pip's two runs alone: %.2fx" % ((pip + dry) / pip))
PY
