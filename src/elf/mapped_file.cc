#include "elf/mapped_file.h"

#include <cerrno>
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
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) {
    if (error) *error = std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) {
    if (error) *error = std::strerror(errno);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    if (error) *error = std::strerror(EISDIR);
    return nullptr;
  }
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  if (!S_ISREG(st.st_mode) || st.st_size == 0) return file;  // empty: the caller says "file too short"

  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED) {
    if (error) *error = std::strerror(errno);
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
