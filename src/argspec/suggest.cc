// Suggestions only make error messages friendlier; they never change what is accepted.
#include "argspec/suggest.h"

#include <algorithm>
#include <cctype>

#include "argspec/function_spec.h"

namespace jaxcc::argspec {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// C, C++ and NumPy spellings users bring with them, already lower-cased.
struct Alias {
  std::string_view spelling;
  std::string_view type;
};
constexpr Alias kTypeAliases[] = {
    {"float", "float32"},
    {"double", "float64"},
    {"half", "float16"},
    {"f16", "float16"},
    {"fp16", "float16"},
    {"bf16", "bfloat16"},
    {"f32", "float32"},
    {"fp32", "float32"},
    {"f64", "float64"},
    {"fp64", "float64"},
    {"single", "float32"},
    {"int", "int32"},
    {"i8", "int8"},
    {"i16", "int16"},
    {"i32", "int32"},
    {"i64", "int64"},
    {"u8", "uint8"},
    {"u16", "uint16"},
    {"u32", "uint32"},
    {"u64", "uint64"},
    {"long", "int64"},
    {"short", "int16"},
    {"char", "int8"},
    {"uint", "uint32"},
    {"unsigned", "uint32"},
    {"size", "uint64"},
    {"boolean", "bool"},
    {"bool_", "bool"},
    {"__half", "float16"},
    {"__nv_bfloat16", "bfloat16"},
    {"nv_bfloat16", "bfloat16"},
};

}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::vector<std::string> NearMisses(std::string_view name,
                                    const std::vector<std::string>& candidates, int limit) {
  int budget = std::max<int>(1, static_cast<int>(name.size()) / 3);
  std::string lower = Lower(name);
  std::vector<std::pair<int, std::string>> scored;
  for (const std::string& candidate : candidates) {
    if (candidate == name) continue;
    bool seen = false;
    for (const auto& entry : scored) seen = seen || entry.second == candidate;
    if (seen) continue;
    int distance = Lower(candidate) == lower ? 0 : EditDistance(name, candidate);
    if (distance <= budget) scored.emplace_back(distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& entry : scored) {
    if (static_cast<int>(out.size()) >= limit) break;
    out.push_back(entry.second);
  }
  return out;
}

std::optional<std::string> SuggestAttrTypeName(std::string_view spelling) {
  std::string text = Lower(spelling);
  if (StartsWith(text, "::")) text = text.substr(2);
  if (StartsWith(text, "std::")) text = text.substr(5);
  if (StartsWith(text, "np.") || StartsWith(text, "jnp.")) text = text.substr(text.find('.') + 1);
  if (EndsWith(text, "_t")) text = text.substr(0, text.size() - 2);
  if (AttrTypeFromName(text)) return text;
  for (const Alias& alias : kTypeAliases) {
    if (text == alias.spelling) return std::string(alias.type);
  }
  return std::nullopt;
}

}  // namespace jaxcc::argspec
