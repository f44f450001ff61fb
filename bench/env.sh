# Sourced by the benchmark scripts: ENVDOCTOR and RUNS from the command line, hyperfine present, a
# private work directory removed on exit, and the benchmark environment (make_env.py) in it: $py.
envdoctor=$(realpath "${1:-build/envdoctor}")
runs=${2:-5}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is missing (bash scripts/install-deps.sh)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/make_env.py" "$work/env" 4
py="$work/env/bin/python"
