#include "util/fields.h"

#include <charconv>

namespace jaxcc {

void AppendField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ',';
}

void AppendIntField(std::string& out, std::int64_t value) {
  // Eight bytes, little-endian, whatever the host: a warm record holds a hundred of these (stamps
  // in nanoseconds) and is read on every warm load, where parsing 19 decimal digits each was a
  // tenth of the core's instructions.
  char bytes[sizeof(std::uint64_t)];
  const auto bits = static_cast<std::uint64_t>(value);
  for (size_t i = 0; i < sizeof(bytes); ++i) bytes[i] = static_cast<char>(bits >> (8 * i));
  AppendField(out, std::string_view(bytes, sizeof(bytes)));
}

std::optional<std::string_view> FieldReader::Next() {
  if (failed_) return std::nullopt;
  size_t colon = rest_.find(':');
  // At most 19 digits: the length must fit in size_t without overflow checks of our own.
  if (colon == std::string_view::npos || colon == 0 || colon > 19) {
    failed_ = true;
    return std::nullopt;
  }
  std::uint64_t length = 0;
  auto [end, error] = std::from_chars(rest_.data(), rest_.data() + colon, length);
  if (error != std::errc() || end != rest_.data() + colon || length >= rest_.size() - colon - 1 ||
      rest_[colon + 1 + length] != ',') {
    failed_ = true;
    return std::nullopt;
  }
  std::string_view field = rest_.substr(colon + 1, length);
  rest_.remove_prefix(colon + 2 + length);
  return field;
}

std::optional<std::string> FieldReader::NextString() {
  auto field = Next();
  if (!field) return std::nullopt;
  return std::string(*field);
}

std::optional<std::int64_t> FieldReader::NextInt() {
  auto field = Next();
  if (!field) return std::nullopt;
  if (field->size() != sizeof(std::uint64_t)) {
    failed_ = true;
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (size_t i = 0; i < sizeof(value); ++i) {
    value |= std::uint64_t{static_cast<unsigned char>((*field)[i])} << (8 * i);
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace jaxcc
