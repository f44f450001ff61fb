// A shared library that only some commands need, opened on first use with dlopen: libzip (read
// a wheel for --with), libcrypto (SHA-256 for --verify-hashes), libarchive and libsquashfs (read
// a container image for --image). Linking them would make every start pay for loading and relocating them (1.2 ms of
// a 1.9 ms start on this machine, most of a one-file `envdoctor ldd`), and a machine without them could not even list a
// library. This is systemd's way with its optional dependencies (dlopen_many_sym_or_warn).
#pragma once

#include <mutex>
#include <string>

namespace envdoctor::support {

class LazyLibrary {
 public:
  // `soname` is the exact SONAME the headers were compiled against (set by CMake from the
  // library file), so the functions found have the types declared.
  explicit LazyLibrary(const char* soname) : soname_(soname) {}

  // Opens the library (once, on the first call) and looks up `name` in it. Returns nullptr and
  // fills `error` with dlerror()'s words when either fails.
  void* symbol(const char* name, std::string* error);

  // Sets `fn` to the function `name` of the library: true when it was found.
  template <typename Fn>
  bool get(Fn*& fn, const char* name, std::string* error) {
    fn = reinterpret_cast<Fn*>(symbol(name, error));
    return fn != nullptr;
  }

 private:
  const char* soname_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string open_error_;
};

}  // namespace envdoctor::support
