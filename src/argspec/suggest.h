// "Did you mean ...?" helpers shared by the spec parser and the signature reader.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jaxcc::argspec {

/// Levenshtein distance (insert, delete, substitute; each costs 1).
int EditDistance(std::string_view a, std::string_view b);

/// The candidates close to `name` (case-insensitive match, or an edit distance of at most a
/// third of its length, minimum 1), best first, ties in input order; at most `limit` of them.
std::vector<std::string> NearMisses(std::string_view name,
                                    const std::vector<std::string>& candidates, int limit = 3);

/// The arg_spec type a user probably meant by `spelling`: "float" -> "float32",
/// "std::int64_t" -> "int64", "half" -> "float16", "Float32" -> "float32". nullopt when nothing
/// is close.
std::optional<std::string> SuggestAttrTypeName(std::string_view spelling);

}  // namespace jaxcc::argspec
