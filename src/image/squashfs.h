// Squashfs images (enroot's `.sqsh`, `mksquashfs` of a root file system) through libsquashfs
// (squashfs-tools-ng), opened on first use (support::LazyLibrary). The image is one layer: its
// entries in pre-order, each file's data read from the image's blocks and fragments.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "image/archive.h"
#include "image/entries.h"

namespace envdoctor::image {

// Whether the file at `path` starts with the squashfs magic ("hsqs").
bool is_squashfs(const std::string& path);

// A key for the image's cache that changes when the image does, read without reading its data
// blocks: a hash of the superblock and of the metadata tables after the data (inodes,
// directories, fragments, ids), which record every file's size and where its blocks lie.
// nullopt with `error` set when the file is no squashfs image.
std::optional<std::string> squashfs_key(const std::string& path, ReadCounter* counter, std::string* error);

// The image's entries; nullptr with `error` set when libsquashfs cannot be loaded or the image
// cannot be read.
std::unique_ptr<EntryReader> open_squashfs(const std::string& path, std::string* error);

}  // namespace envdoctor::image
