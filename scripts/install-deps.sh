#!/usr/bin/env bash
# Installs the Debian packages envdoctor needs to build and test, and only those missing.
# Safe to run again: with everything present it does nothing and asks no registry.
set -euo pipefail

packages=(
  build-essential cmake make pkg-config
  clang libclang-rt-14-dev          # libFuzzer, ASan, UBSan for the fuzz targets
  clang-format-14                   # the tree's format, checked by make test
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libzip-dev libssl-dev libcli11-dev
  python3 python3-venv python3-pip  # the tests build real venvs and wheels
  python3-jsonschema                # the referee of the JSON Schemas in data/schemas
  libtree hyperfine                 # peers and timing for bench/
  gcc-multilib                      # -m32 fixtures (wrong-class candidates)
  zip unzip
  slurm-wlm munge pdsh prometheus-node-exporter  # tests/fleet: the engines envdoctor plugs into
)
# tests/mcp: Node.js for the MCP SDK client (npm fetches the SDK, pinned by its lock file). Debian
# ships npm as a package of its own; NodeSource's nodejs carries it, and conflicts with Debian's.
packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
