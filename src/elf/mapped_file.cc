#include "elf/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace envdoctor {

namespace {

// Closes a descriptor on every path out of open().
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  auto fail = [&](int errnum) -> std::unique_ptr<MappedFile> {
    if (error) *error = std::strerror(errnum);
    errno = errnum;
    return nullptr;
  };
  // O_NONBLOCK: a FIFO put where a file belongs must not hang the tool (regular files ignore it).
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.fd < 0) return fail(errno);
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) return fail(errno);
  if (S_ISDIR(st.st_mode)) return fail(EISDIR);
  return map(fd.fd, st, path, error);
}

std::unique_ptr<MappedFile> MappedFile::map(int fd, const struct stat& st, std::string path, std::string* error) {
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->path_ = std::move(path);
  if (!S_ISREG(st.st_mode) || st.st_size == 0) return file;  // empty: the caller says "file too short"
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    int errnum = errno;
    if (error) *error = std::strerror(errnum);
    errno = errnum;
    return nullptr;
  }
  file->data_ = static_cast<const u8*>(p);
  file->size_ = static_cast<u64>(st.st_size);
  file->mapped_ = true;
  return file;
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
