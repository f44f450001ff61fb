#!/usr/bin/env bash
# An older Debian's root file system, made once with mmdebstrap from Debian's archive and kept
# outside the clone, so that a fresh clone on the same machine reuses it. Prints the root's path.
# Safe to run again: with the root there it asks no registry.
#
#   scripts/debian-root.sh glibc    the root the wheel's binary is linked against (make wheel,
#                                   src/CMakeLists.txt's envdoctor_manylinux): Debian 11's libc6-dev
#                                   (glibc 2.31) and what it depends on, unpacked and nothing run
#                                   (5 s, 67 MB), in $XDG_CACHE_HOME/envdoctor-build/roots/
#   scripts/debian-root.sh python   a minimal Debian 11 with its own python3 and python3-venv
#                                   (51 s, 190 MB), where tests/manylinux installs the wheel with that
#                                   root's pip and runs it, in the tests' cache
#                                   ($ENVDOCTOR_TEST_CACHE, as scripts/install-test-tools.sh finds it)/roots/
#   scripts/debian-root.sh --path KIND   the path alone, made or not
#
# Debian 11 (bullseye, glibc 2.31) is the oldest release Debian's archive still serves: Debian 10's
# suites (glibc 2.28) are gone from it. Linked against 2.31, the binary could still take a symbol of
# 2.29-2.31: `make wheel` refuses a binary that earns more than manylinux_2_28
# (packaging/build_wheel.py --require-tag), and packaging/old_glibc.cc defines what it would otherwise take.
set -euo pipefail

suite=bullseye
path_only=false
if [[ "${1:-}" == "--path" ]]; then
  path_only=true
  shift
fi
kind="${1:-}"
cache_home="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}"
case "$kind" in
  glibc)
    root="$cache_home/envdoctor-build/roots/debian-11-glibc"
    options=(--variant=extract --include=libc6-dev)
    ;;
  python)
    root="${ENVDOCTOR_TEST_CACHE:-$cache_home/envdoctor-tests}/roots/debian-11-python"
    options=(--variant=minbase --include=python3,python3-venv)
    ;;
  *)
    echo "usage: scripts/debian-root.sh [--path] glibc|python" >&2
    exit 2
    ;;
esac
if $path_only || [[ -f "$root/.complete" ]]; then
  echo "$root"
  exit 0
fi

mkdir -p "$(dirname "$root")"
# One maker at a time (make wheel beside make test); the root appears whole or not at all.
exec 9>"$root.lock"
flock 9
if [[ ! -f "$root/.complete" ]]; then
  if ! command -v mmdebstrap >/dev/null; then
    echo "debian-root: needs mmdebstrap (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
  echo "debian-root: making $root (Debian 11, ${options[*]})" >&2
  tmp="$root.tmp"
  rm -rf "$tmp" "$root"
  mmdebstrap --quiet "${options[@]}" "$suite" "$tmp" >&2
  if [[ "$kind" == glibc ]]; then
    # The linker reads this root through --sysroot, where an absolute link (libpthread.so ->
    # /lib/x86_64-linux-gnu/libpthread.so.0, /lib64/ld-linux-x86-64.so.2) would name this
    # machine's own file: each is made relative, to its file inside the root.
    find "$tmp" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
      target=$(readlink "$link")
      ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$tmp$target")" "$link"
    done
  fi
  touch "$tmp/.complete"
  mv "$tmp" "$root"
fi
echo "$root"
