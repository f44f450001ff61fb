// Read-only file contents and the one checked accessor through which every offset taken from a
// file is read.
//
// A MappedFile owns either a read-only mmap of a file on disk or a heap buffer (a member of a
// wheel, read from the zip into memory); both expose the same immutable byte span. Nothing in
// envdoctor ever maps a file for execution.
//
// Bytes is a non-owning view with bounds-checked reads: `off <= size && len <= size - off`,
// written so that no addition can overflow. Readers return false or nullopt on a bad offset and
// the caller turns that into a finding; they never read outside the span.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <cstddef>
#include <cstdint>

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/types.h"

namespace envdoctor {

class Bytes {
 public:
  Bytes() = default;
  Bytes(const u8* data, u64 size) : data_(data), size_(size) {}
  explicit Bytes(std::span<const u8> s) : data_(s.data()), size_(s.size()) {}

  const u8* data() const { return data_; }
  u64 size() const { return size_; }
  bool empty() const { return size_ == 0; }

  bool contains(u64 off, u64 len) const { return off <= size_ && len <= size_ - off; }

  // The sub-range [off, off+len), or nullopt when it does not lie inside.
  std::optional<Bytes> slice(u64 off, u64 len) const {
    if (!contains(off, len)) return std::nullopt;
    return Bytes(data_ + off, len);
  }

  // A pointer to `len` readable bytes at `off`, or nullptr.
  const u8* at(u64 off, u64 len) const { return contains(off, len) ? data_ + off : nullptr; }

  // A NUL-terminated string starting at `off`; nullopt when `off` is outside or no NUL follows
  // before the end.
  std::optional<std::string_view> cstr(u64 off) const {
    if (off >= size_) return std::nullopt;
    const void* nul = std::memchr(data_ + off, 0, size_ - off);
    if (!nul) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(data_ + off), static_cast<const u8*>(nul) - (data_ + off));
  }

  std::string_view as_string_view() const { return std::string_view(reinterpret_cast<const char*>(data_), size_); }

 private:
  const u8* data_ = nullptr;
  u64 size_ = 0;
};

// A file opened read-only to be mapped: the descriptor (closed with this object) and what fstat
// said of it. O_NONBLOCK, so that a FIFO put where a file belongs cannot hang the tool (regular
// files ignore it).
class OpenFile {
 public:
  explicit OpenFile(const std::string& path);
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int errnum() const { return errnum_; }  // 0 when open and fstat succeeded
  int fd() const { return fd_; }
  const struct stat& stat() const { return st_; }

 private:
  int fd_ = -1;
  int errnum_ = 0;
  struct stat st_ {};
};

class MappedFile {
 public:
  // Maps `path` read-only. On failure returns nullptr and sets `error` to strerror's text
  // (the words the loader would print after "cannot open shared object file: ").
  static std::unique_ptr<MappedFile> open(const std::string& path, std::string* error);
  // Maps `file` under the name `path`. A file that is not regular, or empty, gives an empty span.
  static std::unique_ptr<MappedFile> map(const OpenFile& file, std::string path, std::string* error);

  // Takes ownership of bytes already in memory (a wheel member).
  static std::unique_ptr<MappedFile> from_buffer(std::string name, std::vector<u8> data);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  Bytes bytes() const { return Bytes(data_, size_); }
  const std::string& path() const { return path_; }

  // Says that [off, off + len) is about to be read, so that the kernel reads it ahead in large
  // requests, and only it. A page fault on a mapped file that is not in the page cache reads
  // read_ahead_kb around the page (8 MB on some machines' disks), so with a cold cache the header
  // and dynamic section of a 400 MB library would cost three such reads. A file up to
  // kWholeReadLimit is left to that first fault, which reads all of it at once; so is a buffer.
  // So is a file found in the page cache when it is mapped (the usual case, where the requests
  // would cost more than they save): its byte at 64 KiB is read once with RWF_NOWAIT, which fails
  // where that page is not there (a page that reading the header alone does not bring in).
  static constexpr u64 kWholeReadLimit = 1 << 20;
  void will_read(u64 off, u64 len) const;

 private:
  MappedFile() = default;

  std::string path_;
  const u8* data_ = nullptr;
  u64 size_ = 0;
  bool mapped_ = false;
  bool advise_ = false;  // not in the page cache when mapped: will_read asks the kernel
  std::vector<u8> owned_;
};

}  // namespace envdoctor
