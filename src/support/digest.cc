#include "support/digest.h"

#include <openssl/evp.h>

#include "support/lazy_library.h"

namespace envdoctor::support {

namespace {

// The part of libcrypto a digest needs.
struct Libcrypto {
  decltype(::EVP_MD_CTX_new)* ctx_new;
  decltype(::EVP_MD_CTX_free)* ctx_free;
  decltype(::EVP_sha256)* sha256;
  decltype(::EVP_md5)* md5;
  decltype(::EVP_DigestInit_ex)* init;
  decltype(::EVP_DigestUpdate)* update;
  decltype(::EVP_DigestFinal_ex)* final;
};

// libcrypto's functions, or nullptr with `error` saying why it could not be loaded.
const Libcrypto* libcrypto(std::string* error = nullptr) {
  static LazyLibrary lib(ENVDOCTOR_LIBCRYPTO_SONAME);
  static Libcrypto api;
  static std::string why;
  static const bool ok = lib.get(api.ctx_new, "EVP_MD_CTX_new", &why) &&
                         lib.get(api.ctx_free, "EVP_MD_CTX_free", &why) && lib.get(api.sha256, "EVP_sha256", &why) &&
                         lib.get(api.md5, "EVP_md5", &why) && lib.get(api.init, "EVP_DigestInit_ex", &why) &&
                         lib.get(api.update, "EVP_DigestUpdate", &why) &&
                         lib.get(api.final, "EVP_DigestFinal_ex", &why);
  if (!ok && error) *error = "cannot compute SHA-256: " + why;
  return ok ? &api : nullptr;
}

std::vector<u8> one_shot(Digest::Kind kind, const void* data, size_t n) {
  Digest d(kind);
  d.update(data, n);
  return d.finish();
}

}  // namespace

bool digests_available(std::string* error) { return libcrypto(error) != nullptr; }

Digest::Digest(Kind kind) {
  const Libcrypto* crypto = libcrypto();
  if (!crypto) return;
  EVP_MD_CTX* ctx = crypto->ctx_new();
  if (ctx && !crypto->init(ctx, kind == Kind::kMd5 ? crypto->md5() : crypto->sha256(), nullptr)) {
    crypto->ctx_free(ctx);
    ctx = nullptr;
  }
  ctx_ = ctx;
}

Digest::~Digest() {
  if (ctx_) libcrypto()->ctx_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Digest::update(const void* data, size_t n) {
  if (ok() && n > 0 && !libcrypto()->update(static_cast<EVP_MD_CTX*>(ctx_), data, n)) failed_ = true;
}

std::vector<u8> Digest::finish() {
  if (!ok()) return {};
  std::vector<u8> out(EVP_MAX_MD_SIZE);
  unsigned len = 0;
  if (!libcrypto()->final(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len)) return {};
  failed_ = true;  // a finished context takes no more
  out.resize(len);
  return out;
}

std::vector<u8> sha256_of(const void* data, size_t n) { return one_shot(Digest::Kind::kSha256, data, n); }
std::vector<u8> md5_of(const void* data, size_t n) { return one_shot(Digest::Kind::kMd5, data, n); }

}  // namespace envdoctor::support
