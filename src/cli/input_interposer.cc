// The C library's file functions, interposed by the envdoctor executable so that the input log
// (support/input_log.h) sees every path the process reads: this executable is first in the
// process's symbol scope, so the calls of its own code, of the C++ library linked into it
// (std::filesystem, std::ifstream) and of the libraries it opens (libarchive, libsquashfs) come
// here. Each notes its path and calls the C library's own function (dlsym RTLD_NEXT) with the
// same arguments; what that returns, and errno, are the caller's.
//
// Only the executables link this file (envdoctor and the wheel's portable envdoctor_manylinux,
// not the test binaries): without it, input_log_installed() is false and the index is never
// used. The C library's calls to itself (fopen's open) do not
// come here, which is why fopen, opendir, realpath and glob are interposed themselves. Opens for
// writing are outputs, not inputs. write and writev to stdout and stderr are watched too: what
// the index keeps of a run's output is what passes std::cout and std::cerr.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "support/input_log.h"

namespace {

namespace inputs = envdoctor::support;

// The next definition of `name` after this executable's: the C library's.
template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

bool reading(int flags) { return (flags & O_ACCMODE) == O_RDONLY && (flags & O_CREAT) == 0; }

mode_t mode_argument(int flags, va_list ap) {
#ifdef __O_TMPFILE
  bool needs = (flags & O_CREAT) != 0 || (flags & __O_TMPFILE) == __O_TMPFILE;
#else
  bool needs = (flags & O_CREAT) != 0;
#endif
  return needs ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

bool reading_mode(const char* mode) { return mode != nullptr && mode[0] == 'r' && std::strchr(mode, '+') == nullptr; }

[[gnu::constructor]] void install() { inputs::mark_input_log_installed(); }

}  // namespace

extern "C" {

#define ENVDOCTOR_OPEN(NAME)                                        \
  int NAME(const char* path, int flags, ...) {                      \
    static auto real = next<int (*)(const char*, int, ...)>(#NAME); \
    va_list ap;                                                     \
    va_start(ap, flags);                                            \
    mode_t mode = mode_argument(flags, ap);                         \
    va_end(ap);                                                     \
    if (reading(flags)) inputs::note_input(path, true);             \
    return real(path, flags, mode);                                 \
  }
ENVDOCTOR_OPEN(open)
ENVDOCTOR_OPEN(open64)
#undef ENVDOCTOR_OPEN

#define ENVDOCTOR_OPENAT(NAME)                                           \
  int NAME(int dirfd, const char* path, int flags, ...) {                \
    static auto real = next<int (*)(int, const char*, int, ...)>(#NAME); \
    va_list ap;                                                          \
    va_start(ap, flags);                                                 \
    mode_t mode = mode_argument(flags, ap);                              \
    va_end(ap);                                                          \
    if (reading(flags)) inputs::note_input_at(dirfd, path, true);        \
    return real(dirfd, path, flags, mode);                               \
  }
ENVDOCTOR_OPENAT(openat)
ENVDOCTOR_OPENAT(openat64)
#undef ENVDOCTOR_OPENAT

// _FORTIFY_SOURCE's checked opens.
int __open_2(const char* path, int flags) {
  static auto real = next<int (*)(const char*, int)>("__open_2");
  if (reading(flags)) inputs::note_input(path, true);
  return real(path, flags);
}
int __open64_2(const char* path, int flags) {
  static auto real = next<int (*)(const char*, int)>("__open64_2");
  if (reading(flags)) inputs::note_input(path, true);
  return real(path, flags);
}
int __openat_2(int dirfd, const char* path, int flags) {
  static auto real = next<int (*)(int, const char*, int)>("__openat_2");
  if (reading(flags)) inputs::note_input_at(dirfd, path, true);
  return real(dirfd, path, flags);
}
int __openat64_2(int dirfd, const char* path, int flags) {
  static auto real = next<int (*)(int, const char*, int)>("__openat64_2");
  if (reading(flags)) inputs::note_input_at(dirfd, path, true);
  return real(dirfd, path, flags);
}

FILE* fopen(const char* __restrict path, const char* __restrict mode) {
  static auto real = next<FILE* (*)(const char*, const char*)>("fopen");
  if (reading_mode(mode)) inputs::note_input(path, true);
  return real(path, mode);
}
FILE* fopen64(const char* __restrict path, const char* __restrict mode) {
  static auto real = next<FILE* (*)(const char*, const char*)>("fopen64");
  if (reading_mode(mode)) inputs::note_input(path, true);
  return real(path, mode);
}

// glibc before 2.33 exports no stat of its own: the portable binary, linked against glibc 2.31,
// may run on one, where stat is __xstat with the structure's version first.
#if defined(__x86_64__)
constexpr int kStatVersion = 1;  // _STAT_VER_LINUX
#else
constexpr int kStatVersion = 0;
#endif

#define ENVDOCTOR_STAT(NAME, OLD, STRUCT)                                                    \
  int NAME(const char* __restrict path, struct STRUCT* __restrict buf) __THROW {             \
    static auto real = next<int (*)(const char*, struct STRUCT*)>(#NAME);                    \
    static auto old = real ? nullptr : next<int (*)(int, const char*, struct STRUCT*)>(OLD); \
    inputs::note_input(path);                                                                \
    return real ? real(path, buf) : old(kStatVersion, path, buf);                            \
  }
ENVDOCTOR_STAT(stat, "__xstat", stat)
ENVDOCTOR_STAT(lstat, "__lxstat", stat)
ENVDOCTOR_STAT(stat64, "__xstat64", stat64)
ENVDOCTOR_STAT(lstat64, "__lxstat64", stat64)
#undef ENVDOCTOR_STAT

#define ENVDOCTOR_FSTATAT(NAME, OLD, STRUCT)                                                           \
  int NAME(int dirfd, const char* __restrict path, struct STRUCT* __restrict buf, int flags) __THROW { \
    static auto real = next<int (*)(int, const char*, struct STRUCT*, int)>(#NAME);                    \
    static auto old = real ? nullptr : next<int (*)(int, int, const char*, struct STRUCT*, int)>(OLD); \
    inputs::note_input_at(dirfd, path);                                                                \
    return real ? real(dirfd, path, buf, flags) : old(kStatVersion, dirfd, path, buf, flags);          \
  }
ENVDOCTOR_FSTATAT(fstatat, "__fxstatat", stat)
ENVDOCTOR_FSTATAT(fstatat64, "__fxstatat64", stat64)
#undef ENVDOCTOR_FSTATAT

int statx(int dirfd, const char* __restrict path, int flags, unsigned int mask, struct statx* __restrict buf) __THROW {
  static auto real = next<int (*)(int, const char*, int, unsigned int, struct statx*)>("statx");
  inputs::note_input_at(dirfd, path);
  return real(dirfd, path, flags, mask, buf);
}

int access(const char* path, int how) __THROW {
  static auto real = next<int (*)(const char*, int)>("access");
  inputs::note_input(path);
  return real(path, how);
}
int faccessat(int dirfd, const char* path, int how, int flags) __THROW {
  static auto real = next<int (*)(int, const char*, int, int)>("faccessat");
  inputs::note_input_at(dirfd, path);
  return real(dirfd, path, how, flags);
}
int eaccess(const char* path, int how) __THROW {
  static auto real = next<int (*)(const char*, int)>("eaccess");
  inputs::note_input(path);
  return real(path, how);
}
int euidaccess(const char* path, int how) __THROW {
  static auto real = next<int (*)(const char*, int)>("euidaccess");
  inputs::note_input(path);
  return real(path, how);
}

ssize_t readlink(const char* __restrict path, char* __restrict buf, size_t size) __THROW {
  static auto real = next<ssize_t (*)(const char*, char*, size_t)>("readlink");
  inputs::note_input(path);
  return real(path, buf, size);
}
ssize_t readlinkat(int dirfd, const char* __restrict path, char* __restrict buf, size_t size) __THROW {
  static auto real = next<ssize_t (*)(int, const char*, char*, size_t)>("readlinkat");
  inputs::note_input_at(dirfd, path);
  return real(dirfd, path, buf, size);
}

char* realpath(const char* __restrict path, char* __restrict resolved) __THROW {
  static auto real = next<char* (*)(const char*, char*)>("realpath");
  inputs::note_resolution(path);
  return real(path, resolved);
}
char* canonicalize_file_name(const char* path) __THROW {
  static auto real = next<char* (*)(const char*)>("canonicalize_file_name");
  inputs::note_resolution(path);
  return real(path);
}

DIR* opendir(const char* path) {
  static auto real = next<DIR* (*)(const char*)>("opendir");
  inputs::note_input(path, true);
  return real(path);
}

int glob(const char* __restrict pattern, int flags, int (*errfunc)(const char*, int),
         glob_t* __restrict found) __THROW {
  static auto real = next<int (*)(const char*, int, int (*)(const char*, int), glob_t*)>("glob");
  int rc = real(pattern, flags, errfunc, found);
  inputs::note_glob(pattern);
  if (rc == 0)
    for (size_t i = found->gl_offs; i < found->gl_offs + found->gl_pathc; ++i) inputs::note_input(found->gl_pathv[i]);
  return rc;
}
int glob64(const char* __restrict pattern, int flags, int (*errfunc)(const char*, int),
           glob64_t* __restrict found) __THROW {
  static auto real = next<int (*)(const char*, int, int (*)(const char*, int), glob64_t*)>("glob64");
  int rc = real(pattern, flags, errfunc, found);
  inputs::note_glob(pattern);
  if (rc == 0)
    for (size_t i = found->gl_offs; i < found->gl_offs + found->gl_pathc; ++i) inputs::note_input(found->gl_pathv[i]);
  return rc;
}

// Output past the captured streams (support/input_log.h, note_direct_output).
ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  if (fd == STDOUT_FILENO || fd == STDERR_FILENO) inputs::note_direct_output(fd);
  return real(fd, buf, n);
}
ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
  if (fd == STDOUT_FILENO || fd == STDERR_FILENO) inputs::note_direct_output(fd);
  return real(fd, iov, count);
}

}  // extern "C"
