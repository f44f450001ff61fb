#!/usr/bin/env bash
# Times `envdoctor check` on the benchmark environment (bench/make_env.py: a real venv with 2,000
# library files, four copies of 500 of this machine's libraries, under real RECORDs), with
# --verify-hashes, and under simulation (--without); and what the fleet tools run: `snapshot`,
# `snapshot --digest` and `check --format nhc`.
#
#   bash bench/check.sh [ENVDOCTOR] [RUNS] [LIBRARIES]   (LIBRARIES: 0 for all of the machine's)
set -euo pipefail
source "$(dirname "$0")/env.sh"
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
bytes=$(find "$site" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s}')
echo "environment: $("$envdoctor" check --python "$py" | head -1); $((bytes / 1000000)) MB of files"
echo
hyperfine --style none --warmup 1 --runs "$runs" -i --export-markdown "$work/check.md" \
  -n "check" "$envdoctor check --python $py" \
  -n "check --without benchpkg0_3" "$envdoctor check --python $py --without benchpkg0_3" \
  -n "check --verify-hashes" "$envdoctor check --verify-hashes --python $py" \
  -n "snapshot" "$envdoctor snapshot --python $py" \
  -n "snapshot --digest" "$envdoctor snapshot --digest --python $py" \
  -n "check --format nhc" "$envdoctor check --format nhc --python $py" >/dev/null
cat "$work/check.md"
echo
echo "single-core SHA-256 (OpenSSL EVP, 1 MiB blocks):"
openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | tail -1
