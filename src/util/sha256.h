// SHA-256 (FIPS 180-4), jaxcc's own implementation, as lowercase hex (decision 98).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace jaxcc {

/// Digest of one buffer.
std::string Sha256Hex(std::string_view data);

/// Digest of a file's bytes, read in chunks. Fails with ErrorKind::kIo naming the path.
Result<std::string> Sha256FileHex(const std::string& path);

/// Incremental digest. Update() with length-prefixed fields when hashing structured input.
class Sha256Builder {
 public:
  Sha256Builder() { Reset(); }
  Sha256Builder(const Sha256Builder&) = delete;
  Sha256Builder& operator=(const Sha256Builder&) = delete;

  void Update(std::string_view data);
  /// Appends the field's length then its bytes, so ("ab","c") and ("a","bc") differ.
  void UpdateField(std::string_view field);
  /// The digest of everything updated so far; the builder starts afresh afterwards.
  std::string FinishHex();

 private:
  void Reset();

  std::uint32_t state_[8];
  unsigned char pending_[64];  // bytes of the block not yet compressed
  std::size_t pending_size_;
  std::uint64_t total_size_;
};

}  // namespace jaxcc
