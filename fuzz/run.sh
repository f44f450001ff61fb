#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR for SECONDS each, starting from its seed corpus
# fuzz/corpus/<target>/ (copied to a temporary directory, so the repository never receives new
# inputs). Every target runs; the script exits non-zero if any crashed, leaked, timed out or ran
# out of memory, after printing each reproducer's path (kept under $FUZZ_ARTIFACTS, default
# BUILD_DIR/fuzz-artifacts).
#   usage: fuzz/run.sh BUILD_DIR SECONDS
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
artifacts=${FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
mkdir -p "$artifacts"
artifacts=$(cd "$artifacts" && pwd)

shopt -s nullglob
targets=("$build"/fuzz/*_fuzz)
if ((${#targets[@]} == 0)); then
  echo "fuzz/run.sh: no *_fuzz targets under $build/fuzz (build the \`fuzz\` preset first)" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failed=()
for target in "${targets[@]}"; do
  [[ -x $target ]] || continue
  name=$(basename "$target")
  corpus=$work/$name
  mkdir -p "$corpus"
  if [[ -d $here/corpus/$name ]]; then
    cp -r "$here/corpus/$name/." "$corpus/"
  fi
  echo "fuzz: $name for ${seconds}s ($(ls "$corpus" | wc -l) seeds)"
  # -timeout: one input may not take more than 10 s; -rss_limit_mb: nor 2 GB of memory.
  if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$artifacts/$name-" -print_final_stats=1 "$corpus" \
      >"$work/$name.log" 2>&1; then
    tail -n 25 "$work/$name.log" >&2
    echo "fuzz: $name FAILED; reproducer(s) in $artifacts:" >&2
    ls "$artifacts" | grep "^$name-" >&2 || true
    failed+=("$name")
    continue
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added)" "$work/$name.log" | tr '\n' ' '
  echo
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a failure"
