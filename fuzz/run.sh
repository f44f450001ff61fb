#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR for SECONDS each, starting from its seed corpus
# fuzz/corpus/<target>/ (copied to a temporary directory, so the repository never receives new
# inputs). Every target runs; the script exits non-zero if any crashed, leaked, timed out or ran
# out of memory, after printing each reproducer's path (kept under $FUZZ_ARTIFACTS, default
# BUILD_DIR/fuzz-artifacts). $FUZZ_JOBS targets run at once (default: the number of cores).
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

# One target, alone: its log and its exit status land in $work.
fuzz_one() {
  local target=$1 name corpus status=0
  name=$(basename "$target")
  corpus=$work/$name
  mkdir -p "$corpus"
  if [[ -d $here/corpus/$name ]]; then
    cp -r "$here/corpus/$name/." "$corpus/"
  fi
  echo "$(ls "$corpus" | wc -l)" >"$work/$name.seeds"
  # -timeout: one input may not take more than 10 s; -rss_limit_mb: nor 2 GB of memory.
  "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$name-" -print_final_stats=1 "$corpus" \
    >"$work/$name.log" 2>&1 || status=$?
  echo "$status" >"$work/$name.status"
}

# The targets run side by side, $FUZZ_JOBS at a time (default: one per core): each still gets
# its SECONDS on a core of its own.
jobs=${FUZZ_JOBS:-$(nproc)}
echo "fuzz: ${#targets[@]} targets for ${seconds}s each, $jobs at a time"
running=0
for target in "${targets[@]}"; do
  [[ -x $target ]] || continue
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

failed=()
for target in "${targets[@]}"; do
  [[ -x $target ]] || continue
  name=$(basename "$target")
  echo "fuzz: $name for ${seconds}s ($(cat "$work/$name.seeds") seeds)"
  if [[ $(cat "$work/$name.status" 2>/dev/null) != 0 ]]; then
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
