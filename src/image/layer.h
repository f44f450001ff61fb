// The layer cache: each layer read once, kept under the cache directory by its digest.
//
// A layer keeps what the model reads in full (ELF files, by their magic; package records:
// *.dist-info, *.egg-info, conda-meta, dpkg's database; ld.so.cache and ld.so.conf; .pth files,
// pyvenv.cfg, __init__.py, CUDA's version.json, /etc/environment, Apptainer's /.singularity.d/env
// and /environment) and every other regular file
// as a sparse file of its size, so that a file's existence, type, mode and size are all there
// while the cache holds a fraction of the image. Its index lists every entry in the layer's own
// order: path, type, mode, size, link target, and the whiteouts and opaque markers of the OCI
// image spec, which compose.h applies.
//
// A layer directory appears whole or not at all (written beside, then renamed), so a second
// process, or a second image that shares the layer, reads none of its bytes again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "image/cache.h"
#include "image/entries.h"

namespace envdoctor::image {

enum class LayerEntryKind { kFile, kDirectory, kSymlink, kHardlink, kWhiteout, kOpaque };

struct LayerEntry {
  LayerEntryKind kind = LayerEntryKind::kFile;
  std::string path;  // normal, relative to the root ("usr/lib/libfoo.so"); for kOpaque the directory
  u32 mode = 0;
  u64 size = 0;
  std::string link;      // a symbolic link's target as written; a hard link's normal path
  i64 file = -1;         // kFile: its number in the layer's files/ directory
  bool content = false;  // kFile: the data is kept (else a sparse file of `size`)
};

struct Layer {
  std::string dir;  // the layer's cache directory
  std::vector<LayerEntry> entries;
  std::vector<std::string> problems;  // entries left out, and why
  std::string file(const LayerEntry& e) const { return dir + "/files/" + std::to_string(e.file); }
};

// $XDG_CACHE_HOME/envdoctor (else ~/.cache/envdoctor), with the cache format's version.
std::string cache_root();

// Whether the model reads a file at this (normal, relative) path in full, whatever its bytes.
bool kept_by_name(const std::string& path);

// The layer cached under `key` ("sha256-HEX"), or nullopt when it is not cached (or was evicted
// before `lease` could hold it); held by `lease` when there is one (cache.h).
std::optional<Layer> load_cached_layer(const std::string& cache, const std::string& key, std::string* error,
                                       CacheLease* lease = nullptr);

// The digests an image names a layer by ("sha256:HEX"; "" where it names none): its
// descriptor's, over the bytes as stored, and its diff_id, over the uncompressed tar stream.
struct LayerDigests {
  std::string stored, content;
};

// Reads `reader` to its end into the cache under `key` and returns the layer; nullopt with
// `error` set when the stream cannot be read or its digests are not the ones `expected` names
// (nothing is left in the cache then: a crafted image cannot put its files under the key of
// another image's layer).
// The new layer's marker (cache.h) is held by `lease` when there is one.
std::optional<Layer> cache_layer(const std::string& cache, const std::string& key, EntryReader& reader,
                                 const LayerDigests& expected, std::string* error, CacheLease* lease = nullptr);

}  // namespace envdoctor::image
