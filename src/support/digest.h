// SHA-256 and MD5 through libcrypto, opened on the first digest (see lazy_library.h): a RECORD's
// hashes, dpkg's md5sums, and the digests that name an image's layers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/types.h"

namespace envdoctor::support {

// True when libcrypto can be opened; else false with `error` saying why.
bool digests_available(std::string* error);

// A digest computed as the bytes go by.
class Digest {
 public:
  enum class Kind { kSha256, kMd5 };
  // A digest that cannot be computed (libcrypto missing) is !ok(), and finish() gives nothing.
  explicit Digest(Kind kind);
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  bool ok() const { return ctx_ != nullptr && !failed_; }
  void update(const void* data, size_t n);
  // The digest of everything given; empty when it could not be computed. Once only.
  std::vector<u8> finish();

 private:
  void* ctx_ = nullptr;  // EVP_MD_CTX, whose type only digest.cc names
  bool failed_ = false;
};

std::vector<u8> sha256_of(const void* data, size_t n);
std::vector<u8> md5_of(const void* data, size_t n);

}  // namespace envdoctor::support
