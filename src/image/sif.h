// Apptainer/Singularity images (SIF, the Singularity Image Format of sylabs/sif, version 01): a
// launch script, a global header and a table of data object descriptors, then the objects. The
// container's root file system is the descriptor Apptainer mounts (apptainer pkg/image/sif.go):
// the one partition object (data type 0x4004) whose partition type is the primary system
// partition (PartPrimSys), a squashfs file system. Its bytes are read in place through the
// squashfs reader (squashfs.h, a Section of the file); nothing else of the SIF is read.
//
// Every field is little-endian and packed, as encoding/binary writes Go structs:
//   global header (128 bytes): launch script [32], magic "SIF_MAGIC\0" [10], version "01\0" [3],
//     arch [3], ID [16], created/modified i64, descriptors free/total/offset/size i64, data
//     offset/size i64 (sif.go `header`);
//   descriptor (585 bytes): data type i32, used u8, ID, group ID, linked ID u32, offset, size,
//     size with padding, created, modified, UID, GID i64, name [128], extra [384]
//     (descriptor.go `rawDescriptor`); a partition's extra is fs type i32, partition type i32,
//     arch [3] (`partition`).
#pragma once

#include <optional>
#include <string>

#include "image/squashfs.h"

namespace envdoctor::image {

// Whether the file at `path` starts with a SIF global header (the magic after the launch script).
bool is_sif(const std::string& path);

struct SifRoot {
  Section partition;          // the squashfs file system, within the SIF file
  std::string arch;           // the partition's architecture, as Go names it ("amd64"); "unknown"
  std::string header_tables;  // the global header and the descriptor table, as stored: part of the cache key
};

// The primary system partition of the SIF at `path`, every field checked against the file's
// size; nullopt with `error` saying what is wrong (truncated, another version, no or several
// primary partitions, a partition past the end of the file, a file system other than squashfs).
std::optional<SifRoot> sif_root_partition(const std::string& path, ReadCounter* counter, std::string* error);

}  // namespace envdoctor::image
