// What the NVIDIA container toolkit changes in an image's root when it starts it as a GPU
// container, before anything in it runs (docs/container-start.md): its hooks write ld.so.conf
// drop-ins and rebuild /etc/ld.so.cache with ldconfig, so the loader of a GPU container reads a
// fresh cache, not the one the image was built with.
//   - enable-cuda-compat (nvidia-container-toolkit, cmd/nvidia-cdi-hook/cudacompat): exactly one
//     /usr/local/cuda/compat/libcuda.so.*.* in the image is cuda-compat's forward-compatibility
//     libcuda. With a `.note.cuda.fwd_compatibility` note ("NVIDIA Corporation", a JSON
//     description whose "Driver" lists driver branches) it is used when the host driver's major
//     is listed and the library is newer; without one, when the host driver's major is older than
//     the library's. Used means an /etc/ld.so.conf.d/00-compat-*.conf naming its directory.
//   - update-ldcache (internal/ldconfig): /etc/ld.so.conf made `include /etc/ld.so.conf.d/*.conf`
//     when missing, a zz-nvcr-*.conf with the container's system directories (Debian-like when
//     /etc/debian_version exists), then `ldconfig -f /etc/ld.so.conf -C /etc/ld.so.cache`.
// The driver's own libraries are mounted from the host; the load model takes them as present
// (checks/cuda/driver_libraries.h), so their entries are not part of this plan.
#pragma once

#include <optional>
#include <string>

#include "cuda/versions.h"
#include "image/image.h"
#include "loader/ldconfig.h"
#include "support/root.h"

namespace envdoctor::image {

struct CompatLibcuda {
  std::string path;  // the real file, in-root: /usr/local/cuda-12.8/compat/libcuda.so.570.124.06
  cuda::DriverVersion version;
  bool used = false;
  std::string why;  // the hook's rule, in words, as applied to this host driver
};

// The driver capabilities the toolkit mounts the libraries of (nvidia-container-runtime-hook's
// getDriverCapabilities, internal/config/image): NVIDIA_DRIVER_CAPABILITIES when set and not
// empty ("all" for every one); unset in a legacy image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA
// not), every one; else "utility,compute".
struct DriverCapabilities {
  bool all = false;
  std::vector<std::string> names;  // sorted; empty when `all`
  std::string source;              // "NVIDIA_DRIVER_CAPABILITIES=...", or why the default applies
  bool has(const std::string& capability) const;
};
DriverCapabilities driver_capabilities(const ImageFacts& image);

struct GpuContainerStart {
  std::optional<CompatLibcuda> compat;  // none: the image has no (single) forward-compatibility libcuda
  loader::LdconfigOptions ldconfig;     // the ldconfig run the hooks make
};

// The plan for `root` on a node whose kernel module is `host_driver`; files read through `store`.
GpuContainerStart plan_gpu_container_start(const support::FileRoot& root, loader::ObjectStore& store,
                                           const cuda::DriverVersion& host_driver);

}  // namespace envdoctor::image
