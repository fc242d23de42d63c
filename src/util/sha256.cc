// SHA-256 through OpenSSL's libcrypto.
#define OPENSSL_SUPPRESS_DEPRECATED  // SHA256_*: see Sha256Builder::Impl
#include "util/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "util/fs.h"

#if defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR == 3 && \
    !defined(OPENSSL_NO_DEPRECATED_3_0)
#define JAXCC_SHA256_LOW_LEVEL 1
#else
#define JAXCC_SHA256_LOW_LEVEL 0
#endif

namespace jaxcc {
namespace {

std::string ToHex(const unsigned char* bytes, unsigned int n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return hex;
}

// 8-byte little-endian length: fixed width, so the length itself needs no delimiter.
void EncodeLength(std::uint64_t n, unsigned char out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(n >> (8 * i));
}

}  // namespace

#if JAXCC_SHA256_LOW_LEVEL
// OpenSSL 3's EVP digests are fetched from a provider: the process's first fetch builds the
// provider's method store, 40-500 us, more than the whole rest of a warm load's hashing. The
// SHA256_* calls run the same hardware-accelerated code (SHA-NI, AVX2) without a provider. They
// are deprecated since 3.0 but present in every 3.x; a libcrypto without them takes the EVP
// branch below (decision 85).
struct Sha256Builder::Impl {
  SHA256_CTX ctx;
};

Sha256Builder::Sha256Builder() : impl_(std::make_unique<Impl>()) { SHA256_Init(&impl_->ctx); }

Sha256Builder::~Sha256Builder() = default;

void Sha256Builder::Update(std::string_view data) {
  if (!data.empty()) SHA256_Update(&impl_->ctx, data.data(), data.size());
}

void Sha256Builder::UpdateField(std::string_view field) {
  unsigned char length[8];
  EncodeLength(field.size(), length);
  SHA256_Update(&impl_->ctx, length, sizeof(length));
  Update(field);
}

std::string Sha256Builder::FinishHex() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &impl_->ctx);
  SHA256_Init(&impl_->ctx);  // reusable, like a fresh builder
  return ToHex(digest, SHA256_DIGEST_LENGTH);
}
#else
namespace {

// Fetched once per process; the implicit fetch of EVP_sha256() would repeat the lookup on every
// builder.
const EVP_MD* Sha256Method() {
  static const EVP_MD* method = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return method;
}

}  // namespace

struct Sha256Builder::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256Builder::Sha256Builder() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  // Only allocation failure can make these fail; a digest silently computed over nothing would be
  // a wrong cache key, so fail loudly instead.
  if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, Sha256Method(), nullptr) != 1) {
    std::abort();
  }
}

Sha256Builder::~Sha256Builder() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256Builder::Update(std::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
}

void Sha256Builder::UpdateField(std::string_view field) {
  unsigned char length[8];
  EncodeLength(field.size(), length);
  EVP_DigestUpdate(impl_->ctx, length, sizeof(length));
  Update(field);
}

std::string Sha256Builder::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->ctx, digest, &n);
  // Leave the builder reusable (fresh state) rather than in OpenSSL's "finalised" limbo.
  EVP_DigestInit_ex(impl_->ctx, Sha256Method(), nullptr);
  return ToHex(digest, n);
}
#endif

std::string Sha256Hex(std::string_view data) {
  Sha256Builder builder;
  builder.Update(data);
  return builder.FinishHex();
}

Result<std::string> Sha256FileHex(const std::string& path) {
  Sha256Builder builder;
  JAXCC_RETURN_IF_ERROR(
      ReadFileChunks(path, [&](std::string_view chunk) { builder.Update(chunk); }));
  return builder.FinishHex();
}

}  // namespace jaxcc
