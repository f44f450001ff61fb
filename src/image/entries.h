// What a layer is made of, whatever carries it: a tar stream (an OCI or docker layer, read with
// libarchive) or a squashfs image (libsquashfs). An EntryReader hands out the entries in the
// order the layer stores them and the data of the current one; the layer cache (layer.h) keeps
// what the model needs and the shape of the rest.
#pragma once

#include <optional>
#include <string>

#include "support/types.h"

namespace envdoctor::image {

enum class EntryType { kFile, kDirectory, kSymlink, kHardlink, kOther };

struct RawEntry {
  std::string path;  // as the layer spells it ("./usr/lib/x", "usr/lib/x")
  EntryType type = EntryType::kOther;
  u32 mode = 0;      // permission bits
  u64 size = 0;      // of a regular file's data
  std::string link;  // a symbolic link's target, or the path a hard link names
};

class EntryReader {
 public:
  virtual ~EntryReader() = default;
  // The next entry: false at the end, or on an error (then `error` is set).
  virtual bool next(RawEntry& entry, std::string* error) = 0;
  // Up to `n` bytes of the current entry's data: 0 at its end, -1 on an error (`error` set).
  virtual i64 read(void* buffer, size_t n, std::string* error) = 0;
  // After next() has returned false at the end: the digests of what was read, "sha256:HEX"
  // each, the rest of the stream read first. `stored` is over the bytes as the image stores
  // them (a layer descriptor's digest), `content` over the uncompressed tar stream (a diff_id).
  // Empty when this reader does not compute them; nullopt with `error` set on a read error.
  struct Digests {
    std::string stored, content;
  };
  virtual std::optional<Digests> digests(std::string* error) {
    (void)error;
    return Digests{};
  }
};

// A layer's path made relative and normal ("./usr//lib/" -> "usr/lib"; "" for the root itself).
// False for a path with a ".." component or a NUL: containerd and umoci refuse entries that
// would leave the root, and so does this.
bool normalize_entry_path(const std::string& raw, std::string* out);

}  // namespace envdoctor::image
