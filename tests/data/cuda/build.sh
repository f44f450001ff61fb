#!/bin/sh
# Rebuilds the committed fatbinary fixtures with nvcc (CUDA 13.0 built the committed ones). Each
# is a one-kernel shared library, without the CUDA runtime where it can do without (-rdc needs it
# for the device link that fills .nv_fatbin), stripped, so that it stays small.
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
cat > /tmp/envdoctor_kernel.cu <<'CU'
__global__ void add(float* a, const float* b) { a[threadIdx.x] += b[threadIdx.x]; }
CU
build() {
  out=$1; shift
  "$NVCC" -shared -Xcompiler -fPIC -Xlinker -z,noseparate-code,-s "$@" -o "$out" /tmp/envdoctor_kernel.cu
}
build sm80.so -cudart none -gencode arch=compute_80,code=sm_80
build sm80_ptx.so -cudart none -gencode 'arch=compute_80,code=[sm_80,compute_80]'
build sm90a.so -cudart none -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]'
build sm100f.so -cudart none -gencode 'arch=compute_100f,code=[sm_100f,compute_100f]'
build compressed.so -cudart none -gencode 'arch=compute_80,code=[sm_80,compute_80]' -Xfatbin -compress-all
build ptx90_plain.so -cudart none -gencode 'arch=compute_90,code=[sm_90,compute_90]' -Xfatbin -compress=false
build rdc.so -cudart shared -rdc=true -gencode 'arch=compute_80,code=[sm_80,compute_80]'
rm -f /tmp/envdoctor_kernel.cu
