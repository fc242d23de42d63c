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
  AppendField(out, std::to_string(value));
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
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(field->data(), field->data() + field->size(), value);
  if (field->empty() || error != std::errc() || end != field->data() + field->size()) {
    failed_ = true;
    return std::nullopt;
  }
  return value;
}

}  // namespace jaxcc
