// SHA-256 through OpenSSL's EVP interface (the low-level SHA256_* calls are deprecated in 3.0).
#include "util/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "util/fs.h"

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

}  // namespace

struct Sha256Builder::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256Builder::Sha256Builder() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  // Only allocation failure can make these fail; a digest silently computed over nothing would be
  // a wrong cache key, so fail loudly instead.
  if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
}

Sha256Builder::~Sha256Builder() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256Builder::Update(std::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
}

void Sha256Builder::UpdateField(std::string_view field) {
  // 8-byte little-endian length: fixed width, so the length itself needs no delimiter.
  unsigned char length[8];
  std::uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(n >> (8 * i));
  EVP_DigestUpdate(impl_->ctx, length, sizeof(length));
  Update(field);
}

std::string Sha256Builder::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->ctx, digest, &n);
  // Leave the builder reusable (fresh state) rather than in OpenSSL's "finalised" limbo.
  EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr);
  return ToHex(digest, n);
}

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
