// What the wheel's binary would otherwise take from a glibc newer than 2.28. That binary
// (envdoctor_manylinux, src/CMakeLists.txt) is the release build's objects linked against Debian
// 11's glibc 2.31 (scripts/debian-root.sh glibc), with g++ 12's libstdc++.a linked in; that
// libstdc++ was built against glibc 2.36 and names two symbols 2.31 lacks, and our directory walk
// names one of 2.30. Each is defined here with what glibc 2.28 has, so that the binary earns
// manylinux_2_28 (`make wheel` refuses it otherwise) and runs on RHEL 8, Debian 11, Ubuntu 20.04
// and later. The native build (build/envdoctor) takes them from the system's glibc and does not
// link this file.
#include <dirent.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

extern "C" {

// glibc 2.32: nonzero while the process has a single thread, which libstdc++ reads to skip the
// atomic operations of its reference counts (ext/atomicity.h's __is_single_threaded). Zero keeps
// them atomic, which is right with any number of threads.
char __libc_single_threaded = 0;

// glibc 2.36: a source of std::random_device in libstdc++ (src/c++11/random.cc). getentropy is
// glibc 2.25 and fails only for more than 256 bytes or without getrandom(2) (Linux 3.17); like
// arc4random, this cannot fail, so it aborts there.
uint32_t arc4random() {
  uint32_t value;
  if (getentropy(&value, sizeof value) != 0) abort();
  return value;
}

// glibc 2.30: the environment's directory walk (environment/environment.cc) reads each directory
// with getdents64, which is the system call itself.
ssize_t getdents64(int fd, void* buffer, size_t length) { return syscall(SYS_getdents64, fd, buffer, length); }
}
