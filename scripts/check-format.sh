#!/usr/bin/env bash
# Fails when a C++ file of the tree differs from what clang-format makes of it (.clang-format).
# `make format` rewrites them; this only reads.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^tests/fixtures/data/')
((${#files[@]})) || exit 0
if ! clang-format-14 --style=file --dry-run --Werror "${files[@]}" 2>/tmp/envdoctor-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/envdoctor-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not formatted: /' >&2
  rm -f /tmp/envdoctor-format.$$
  echo "check-format: run 'make format'" >&2
  exit 1
fi
rm -f /tmp/envdoctor-format.$$
