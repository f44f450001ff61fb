// Squashfs images (enroot's `.sqsh`, `mksquashfs` of a root file system) through libsquashfs
// (squashfs-tools-ng), opened on first use (support::LazyLibrary). The image is one layer: its
// entries in pre-order, each file's data read from the image's blocks and fragments. The file
// system may be a Section of a larger file (a SIF image's partition, sif.h): every offset the
// reader or libsquashfs asks for is then relative to the section and checked against its size.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "image/archive.h"
#include "image/entries.h"

namespace envdoctor::image {

// Where in its file a squashfs file system lies: the whole file by default.
struct Section {
  u64 offset = 0;
  std::optional<u64> size;  // nullopt: to the end of the file
};

// Whether the file at `path` starts with the squashfs magic ("hsqs").
bool is_squashfs(const std::string& path);

// A key for the image's cache that changes when the image does, read without reading its data
// blocks: a hash of the superblock and of the metadata tables after the data (inodes,
// directories, fragments, ids), which record every file's size and where its blocks lie.
// `salt` (the bytes of a container format around the file system) is hashed first.
// nullopt with `error` set when the section holds no squashfs image.
std::optional<std::string> squashfs_key(const std::string& path, const Section& section, std::string_view salt,
                                        ReadCounter* counter, std::string* error);

// The image's entries; nullptr with `error` set when libsquashfs cannot be loaded or the image
// cannot be read.
std::unique_ptr<EntryReader> open_squashfs(const std::string& path, const Section& section, std::string* error);

}  // namespace envdoctor::image
