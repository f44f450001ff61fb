# Sourced by the benchmark scripts: ENVDOCTOR, RUNS and LIBRARIES from the command line, hyperfine
# present, a private work directory removed on exit, and the benchmark environment (make_env.py) in
# it: $py, four copies of LIBRARIES of this machine's libraries (default 500: 2,000 library files;
# 0 for all of them).
envdoctor=$(realpath "${1:-build/envdoctor}")
runs=${2:-5}
libraries=${3:-500}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is missing (bash scripts/install-deps.sh)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/make_env.py" "$work/env" 4 "$libraries"
py="$work/env/bin/python"
