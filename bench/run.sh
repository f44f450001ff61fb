#!/usr/bin/env bash
# Times `envdoctor ldd` against its peers (libtree, ldd) on the same files, each given all the
# files in one process, and prints a Markdown table for docs/benchmarks.md.
#
#   bash bench/run.sh [ENVDOCTOR] [RUNS] [wide]
#
# The file set: every regular ELF shared object directly under /usr/lib/x86_64-linux-gnu, plus
# /usr/local/cuda/lib64 when present; with `wide`, also every one below
# /usr/lib/python3/dist-packages and every pyenv interpreter's extension modules (lib-dynload and
# site-packages), the set of issue 13's target. `envdoctor ldd` checks symbol versions and binds
# nothing, as ldd; `envdoctor ldd -r` also binds every undefined symbol, as `ldd -r`; libtree checks
# neither.
# bench/map_floor.c, built here, gives the floor of a mapping reader on the same files: map each
# file, touch its header, walk its .dynsym (one core; nothing else); and the cost of reading the
# same tables with pread instead of mapping them.
set -euo pipefail
envdoctor=${1:-build/envdoctor}
runs=${2:-10}
wide=${3:-}
for tool in hyperfine libtree; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (bash scripts/install-deps.sh)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list="$work/files"
dirs=(/usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64)
if [[ $wide == wide ]]; then
  dirs+=(/usr/lib/python3/dist-packages "$HOME"/.pyenv/versions/*/lib/python3*/lib-dynload
    "$HOME"/.pyenv/versions/*/lib/python3*/site-packages)
fi
for dir in "${dirs[@]}"; do
  [[ -d $dir ]] || continue
  # The two system directories directly; the Python trees whole.
  case $dir in /usr/lib/x86_64-linux-gnu | /usr/local/cuda/lib64) depth=(-maxdepth 1) ;; *) depth=() ;; esac
  find -H "$dir" "${depth[@]}" -type f -name '*.so*' -print0 |
    while IFS= read -r -d '' f; do
      # ELF only: linker scripts named .so are not libraries.
      [[ $(head -c 4 "$f" | od -An -c | tr -d ' ') == '177ELF' ]] && printf '%s\n' "$f"
    done
done | sort > "$list"
n=$(wc -l < "$list")
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 -o "$work/map_floor" "$here/map_floor.c"

# The first $1 files as arguments of one run of the command that follows: through xargs, since
# hyperfine gives its command to sh -c as one argument, at most 128 KiB (MAX_ARG_STRLEN), which
# the paths of a machine with many packages exceed. -s lets one run take them all (up to
# ARG_MAX), as a user's single command line would.
sub() { echo "head -n $1 '$list' | xargs -d '\n' -s $(( $(getconf ARG_MAX) - 65536 ))"; }

echo "Files: $n ELF shared objects ($(tr '\n' '\0' < "$list" | du -cshL --files0-from=- 2>/dev/null | tail -1 | cut -f1)); $(nproc) cores; runs: $runs"
echo
hyperfine --style none --warmup 2 --runs "$runs" -i --export-markdown "$work/peers.md" \
  -n "envdoctor ldd (versions, no symbols)" "$(sub "$n") $envdoctor ldd --exact >/dev/null 2>&1" \
  -n "envdoctor ldd -r (versions + symbols)" "$(sub "$n") $envdoctor ldd -r --exact >/dev/null 2>&1" \
  -n "libtree (no versions, no symbols)" "$(sub "$n") libtree >/dev/null 2>&1" \
  -n "ldd (versions, no symbols)" "$(sub "$n") ldd >/dev/null 2>&1" \
  -n "floor: map, header, .dynsym walk (1 core)" "$work/map_floor 2 < $list >/dev/null" \
  -n "floor: map, header (1 core)" "$work/map_floor 1 < $list >/dev/null" \
  -n "floor: pread the tables instead (1 core)" "$work/map_floor 3 < $list >/dev/null" >/dev/null
cat "$work/peers.md"
echo
echo "Scaling of envdoctor ldd with the number of files:"
echo
args=()
for k in 4 2 1; do
  m=$((n / k))
  args+=(-n "$m files" "$(sub "$m") $envdoctor ldd --exact >/dev/null 2>&1")
done
hyperfine --style none --warmup 2 --runs "$runs" -i --export-markdown "$work/scale.md" "${args[@]}" >/dev/null
cat "$work/scale.md"
