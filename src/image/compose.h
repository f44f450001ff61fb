// The container's root file system as its layers make it (OCI image spec, "Applying
// Changesets"): layers applied in order; in each, the whiteouts first (`.wh.NAME` removes NAME of
// the layers below, `.wh..wh..opq` empties its directory of them; neither touches an entry of
// its own layer), then its entries: a directory is merged into one that exists and replaces
// anything else, every other entry replaces what was at its path. Parent directories are
// resolved inside the root, their symbolic links followed there as a chroot would (containerd
// and umoci do the same), and nothing is written outside it.
//
// The composed root is a directory of hard links to the layers' cached files, so that the whole
// pipeline reads it exactly as it reads `--root DIR`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "image/layer.h"

namespace envdoctor::image {

// The root cached under `key`, held by `lease` (cache.h), with the problems found when it was
// composed; nullopt when it is not cached, or was evicted before it could be held.
std::optional<std::string> cached_root(const std::string& cache, const std::string& key,
                                       std::vector<std::string>* problems, CacheLease* lease);

// The root composed of `layers` (lowest first), cached under `key` with a marker that names
// `layer_keys`, or the one cached there; nullopt with `error` set. Entries that cannot be applied
// are said in `problems`.
std::optional<std::string> compose_root(const std::string& cache, const std::string& key,
                                        const std::vector<Layer>& layers, std::vector<std::string>* problems,
                                        std::string* error, CacheLease* lease = nullptr,
                                        const std::vector<std::string>& layer_keys = {});

}  // namespace envdoctor::image
