#include "elf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>

namespace envdoctor {

OpenFile::OpenFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) errnum_ = errno;
  else if (::fstat(fd_, &st_) != 0) errnum_ = errno;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  OpenFile file(path);
  int errnum = file.errnum() ? file.errnum() : S_ISDIR(file.stat().st_mode) ? EISDIR : 0;
  if (errnum) {
    if (error) *error = std::strerror(errnum);
    errno = errnum;
    return nullptr;
  }
  return map(file, path, error);
}

std::unique_ptr<MappedFile> MappedFile::map(const OpenFile& file, std::string path, std::string* error) {
  const struct stat& st = file.stat();
  std::unique_ptr<MappedFile> mapped(new MappedFile());
  mapped->path_ = std::move(path);
  if (!S_ISREG(st.st_mode) || st.st_size == 0) return mapped;  // empty: the caller says "file too short"
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (p == MAP_FAILED) {
    int errnum = errno;
    if (error) *error = std::strerror(errnum);
    errno = errnum;
    return nullptr;
  }
  mapped->data_ = static_cast<const u8*>(p);
  mapped->size_ = static_cast<u64>(st.st_size);
  mapped->mapped_ = true;
  // A read that may not wait fails with EAGAIN where the page is not in the cache: one system
  // call that, unlike mincore, does not contend with the other threads' mappings.
  char byte;
  struct iovec one = {&byte, 1};
  if (mapped->size_ > kWholeReadLimit && ::preadv2(file.fd(), &one, 1, 64 << 10, RWF_NOWAIT) < 0 && errno == EAGAIN) {
    mapped->advise_ = true;
    // Every reader starts at the header, the program headers and the notes behind it.
    mapped->will_read(0, 64 << 10);
  }
  return mapped;
}

void MappedFile::will_read(u64 off, u64 len) const {
  if (!advise_ || off >= size_) return;
  static const u64 page = static_cast<u64>(::sysconf(_SC_PAGESIZE));
  u64 end = off + std::min(len, size_ - off);
  off &= ~(page - 1);
  // The kernel reads at most the device's largest request per call (force_page_cache_ra).
  constexpr u64 kChunk = 4 << 20;
  for (u64 at = off; at < end; at += kChunk)
    ::madvise(const_cast<u8*>(data_) + at, std::min(kChunk, end - at), MADV_WILLNEED);
}

std::unique_ptr<MappedFile> MappedFile::from_buffer(std::string name, std::vector<u8> data) {
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(name);
  file->owned_ = std::move(data);
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<u8*>(data_), size_);
}

}  // namespace envdoctor
