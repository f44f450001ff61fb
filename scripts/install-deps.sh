#!/usr/bin/env bash
# Installs the Debian packages envdoctor needs to build, and with --test also those its tests
# use as referees, and only those missing. Safe to run again: with everything present it does
# nothing and asks no registry.
#   scripts/install-deps.sh          make run, make wheel, make install: the build
#   scripts/install-deps.sh --test   make test: the build, the tests' own tools and referees, and
#                                    (scripts/install-test-tools.sh) the tests' Python tools and
#                                    corpus of real wheels from the package index, pinned by hash
set -euo pipefail

packages=(
  build-essential cmake ninja-build make pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libzip-dev libssl-dev libcli11-dev
  libarchive-dev libsquashfs-dev liblzo2-dev  # container images (--image): layers, squashfs (LZO: enroot's default)
  python3 python3-venv python3-pip  # the tests build real venvs and wheels
  zip unzip
  mmdebstrap                        # make wheel: Debian 11's glibc to link against (scripts/debian-root.sh)
)

# The referees and engines of the tests, which the build does not need.
test_packages=(
  clang libclang-rt-14-dev          # libFuzzer, ASan, UBSan for the fuzz targets
  clang-format-14                   # the tree's format, checked by make test
  python3-jsonschema                # the referee of the JSON Schemas in data/schemas
  libtree hyperfine                 # peers and timing for bench/
  gcc-multilib                      # -m32 fixtures (wrong-class candidates; i686 for wheel-tag)
  zlib1g-dev                        # wheel-tag: an extension that links zlib (auditwheel's blacklist)
  slurm-wlm munge pdsh prometheus-node-exporter  # tests/fleet: the engines envdoctor plugs into
  python3-torch python3-numpy python3-scipy python3-yaml  # tests/advice/installers: Debian's own Python
  umoci skopeo squashfs-tools siftool  # tests/image: real OCI layouts, docker and OCI archives, squashfs and SIF images
  binutils strace                   # objdump/objcopy for fixtures; strace for the walk's system calls
)
test=false
if [[ "${1:-}" == "--test" ]]; then
  test=true
  packages+=("${test_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The tests' Python tools (uv, auditwheel, the MCP SDK) and the corpus of real wheels. What cannot
# be had is said there and skipped by the tests that need it, so its failure does not stop make test.
if $test; then
  bash "$(dirname "$0")/install-test-tools.sh" || true
  # The wheel's binary (envdoctor_manylinux, which the release tree builds where its glibc root is)
  # and the Debian 11 root that tests/manylinux installs it in; made once, kept outside the clone.
  for root in glibc python; do
    bash "$(dirname "$0")/debian-root.sh" "$root" >/dev/null || true
  done
fi
