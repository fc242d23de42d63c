// A flat record of length-prefixed fields ("<decimal length>:<bytes>," per field, as in
// netstrings), for small files read on the warm path: any byte may appear in a field, and reading
// one is a bounds check and a copy, with no parser tables or allocations per token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jaxcc {

/// Appends one field to `out`.
void AppendField(std::string& out, std::string_view field);
/// An integer as a field of eight bytes, little-endian (NextInt reads it back).
void AppendIntField(std::string& out, std::int64_t value);

/// Reads fields in order from a buffer it does not own. Every read of a malformed, truncated or
/// missing field returns nullopt and leaves the reader failed (all later reads fail too).
class FieldReader {
 public:
  explicit FieldReader(std::string_view text) : rest_(text) {}

  std::optional<std::string_view> Next();
  std::optional<std::string> NextString();
  std::optional<std::int64_t> NextInt();
  /// Whether every field was consumed and none failed.
  bool Done() const { return !failed_ && rest_.empty(); }

 private:
  std::string_view rest_;
  bool failed_ = false;
};

}  // namespace jaxcc
