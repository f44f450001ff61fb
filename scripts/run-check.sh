#!/usr/bin/env bash
# `make run`: check the Python environment a user of this shell would get (see DESIGN.md's
# discovery order: $VIRTUAL_ENV, $CONDA_PREFIX, then python3 on PATH).
set -uo pipefail
envdoctor=${1:-build/envdoctor}
"$envdoctor" check
status=$?
case $status in
  0) ;;
  1) echo "(envdoctor exit status 1: the errors above would stop an import)" >&2 ;;
  *) exit "$status" ;;
esac
exit 0
