// Tar archives through libarchive, opened on first use (support::LazyLibrary): a layer (plain
// tar, gzip or zstd, the filter found from the bytes as `tar` finds it) read as an EntryReader,
// and the members of an outer archive (`docker save`, an OCI archive) read whole or streamed.
// Every byte taken from a file is counted, so that a test can hold the cache to its promise
// that a layer already read is not read again.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "image/entries.h"

namespace envdoctor::image {

// Bytes read from image files, over all threads.
struct ReadCounter {
  std::atomic<u64> bytes{0};
};

// Whether libarchive can be loaded; `error` says why not.
bool libarchive_available(std::string* error);

// A tar stream over `read_chunk`, which fills a buffer and returns its length (0 at the end,
// -1 on an error). nullptr with `error` set when libarchive cannot be loaded.
using ChunkSource = std::function<i64(const void** data, std::string* error)>;
std::unique_ptr<EntryReader> open_tar_stream(ChunkSource source, std::string* error);

// A ChunkSource over the file at `path` from `offset` on, counting into `counter`.
ChunkSource file_source(const std::string& path, ReadCounter* counter, std::string* error);

// An outer archive: a tar file whose members are an image's blobs.
class OuterArchive {
 public:
  explicit OuterArchive(std::string path, ReadCounter* counter) : path_(std::move(path)), counter_(counter) {}
  const std::string& path() const { return path_; }
  // The member `name` ("manifest.json", "blobs/sha256/HEX") read whole, at most `limit` bytes:
  // nullopt with `error` set when it is not there, is larger, or cannot be read.
  std::optional<std::string> read_member(const std::string& name, u64 limit, std::string* error) const;
  // The member `name` as a tar stream of its own (a layer inside the archive).
  std::unique_ptr<EntryReader> open_member_tar(const std::string& name, std::string* error) const;
  // Whether the archive has a member `name`.
  bool has_member(const std::string& name) const;

 private:
  std::string path_;
  ReadCounter* counter_;
};

}  // namespace envdoctor::image
