// SHA-256's padding and buffering around the block function of util/sha256_compress.h
// (FIPS 180-4, sections 5.1.1 and 6.2).
#include "util/sha256.h"

#include <algorithm>
#include <cstring>

#include "util/fs.h"
#include "util/sha256_compress.h"

namespace jaxcc {
namespace {

// The initial hash value, FIPS 180-4 section 5.3.3.
constexpr std::uint32_t kInitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// 8-byte big-endian, as the padding's length field; also the length prefix of UpdateField
// (fixed width, so the prefix itself needs no delimiter).
void StoreBigEndian64(std::uint64_t n, unsigned char out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(n >> (56 - 8 * i));
}

void StoreLittleEndian64(std::uint64_t n, unsigned char out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(n >> (8 * i));
}

}  // namespace

void Sha256Builder::Reset() {
  std::memcpy(state_, kInitialState, sizeof(state_));
  pending_size_ = 0;
  total_size_ = 0;
}

void Sha256Builder::Update(std::string_view data) {
  const sha256_detail::CompressFn compress = sha256_detail::SelectedCompress();
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t size = data.size();
  total_size_ += size;
  if (pending_size_ > 0) {
    std::size_t take = std::min(size, sizeof(pending_) - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes, take);
    pending_size_ += take;
    bytes += take;
    size -= take;
    if (pending_size_ < sizeof(pending_)) return;
    compress(state_, pending_, 1);
    pending_size_ = 0;
  }
  // Whole blocks straight from the caller's buffer: no copy for the bulk of a file.
  if (size >= 64) {
    compress(state_, bytes, size / 64);
    bytes += size / 64 * 64;
    size %= 64;
  }
  if (size > 0) {
    std::memcpy(pending_, bytes, size);
    pending_size_ = size;
  }
}

void Sha256Builder::UpdateField(std::string_view field) {
  // Little-endian, as jaxcc has always written it: keys computed from these fields must not
  // change when the SHA-256 code does (docs/cache.md).
  unsigned char length[8];
  StoreLittleEndian64(field.size(), length);
  Update(std::string_view(reinterpret_cast<const char*>(length), sizeof(length)));
  Update(field);
}

std::string Sha256Builder::FinishHex() {
  // Padding: 0x80, zeros up to 56 mod 64, then the message length in bits.
  const std::uint64_t bits = total_size_ * 8;
  unsigned char tail[64 + 8] = {0x80};
  std::size_t zeros_and_marker = (pending_size_ < 56 ? 56 : 120) - pending_size_;
  StoreBigEndian64(bits, tail + zeros_and_marker);
  Update(std::string_view(reinterpret_cast<const char*>(tail), zeros_and_marker + 8));

  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      hex[8 * i + j] = kDigits[(state_[i] >> (28 - 4 * j)) & 0xf];
    }
  }
  Reset();  // reusable, like a fresh builder
  return hex;
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
