// SHA-256 through OpenSSL's libcrypto, as lowercase hex.
#pragma once

#include <memory>
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
  Sha256Builder();
  ~Sha256Builder();
  Sha256Builder(const Sha256Builder&) = delete;
  Sha256Builder& operator=(const Sha256Builder&) = delete;

  void Update(std::string_view data);
  /// Appends the field's length then its bytes, so ("ab","c") and ("a","bc") differ.
  void UpdateField(std::string_view field);
  std::string FinishHex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jaxcc
