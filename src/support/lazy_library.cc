#include "support/lazy_library.h"

#include <dlfcn.h>

namespace envdoctor::support {

void* LazyLibrary::symbol(const char* name, std::string* error) {
  std::call_once(once_, [&] {
    // RTLD_LOCAL: nothing of it joins the global scope; RTLD_NOW: an incomplete library fails
    // here, not in the middle of reading a wheel.
    handle_ = ::dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) open_error_ = ::dlerror();
  });
  if (!handle_) {
    if (error) *error = open_error_;
    return nullptr;
  }
  ::dlerror();
  void* p = ::dlsym(handle_, name);
  if (!p && error) {
    const char* why = ::dlerror();
    *error = why ? why : std::string(soname_) + ": no symbol " + name;
  }
  return p;
}

}  // namespace envdoctor::support
