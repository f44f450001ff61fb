// support::LazyLibrary: the optional dependencies are opened on first use, and a missing one
// becomes dlerror()'s words, not a crash.
#include "support/lazy_library.h"

#include <gtest/gtest.h>
#include <zip.h>

namespace envdoctor::support {
namespace {

TEST(LazyLibrary, FindsTheFunctionsOfTheLibraryTheHeadersDescribe) {
  LazyLibrary lib(ENVDOCTOR_LIBZIP_SONAME);
  decltype(::zip_libzip_version)* version = nullptr;
  std::string error;
  ASSERT_TRUE(lib.get(version, "zip_libzip_version", &error)) << error;
  EXPECT_STREQ(version(), LIBZIP_VERSION);
  decltype(::zip_open)* open = nullptr;
  EXPECT_FALSE(lib.get(open, "zip_no_such_function", &error));
  EXPECT_NE(error.find("zip_no_such_function"), std::string::npos) << error;
}

TEST(LazyLibrary, AMissingLibraryIsAnErrorOnEveryCall) {
  LazyLibrary lib("libenvdoctor-absent.so.0");
  void (*fn)() = nullptr;
  std::string error;
  EXPECT_FALSE(lib.get(fn, "anything", &error));
  EXPECT_EQ(error, "libenvdoctor-absent.so.0: cannot open shared object file: No such file or directory");
  error.clear();
  EXPECT_EQ(lib.symbol("anything", &error), nullptr);
  EXPECT_EQ(error, "libenvdoctor-absent.so.0: cannot open shared object file: No such file or directory");
}

}  // namespace
}  // namespace envdoctor::support
