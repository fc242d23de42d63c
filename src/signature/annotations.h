// `// @BE <function> [tokens...]` (or `// @jaxcc ...`) annotations, read from real line comments.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "signature/diagnostic.h"
#include "signature/lexer.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// One annotation. `tokens` is nullopt for a bare `// @BE f` (spec inferred from the C++).
struct Annotation {
  std::string function;
  std::optional<std::vector<std::string>> tokens;
  int source_index = 0;
  size_t offset = 0;  ///< byte offset of the comment, to find its enclosing namespace
  Span comment_span;  ///< the marker (`@BE`) through the last token
  Span function_span;
  std::vector<Span> token_spans;  ///< one per token
  /// The text of a trailing `sharding="RULE"`, when present, and where RULE starts (line and
  /// column of its first character) so rule errors can point into it.
  std::optional<std::string> sharding;
  Span sharding_span;
  /// The text of a trailing `tune="BLOCK=16,32; ..."` (decision 159a), and where it starts.
  std::optional<std::string> tune;
  Span tune_span;
};

/// What scanning found: the usable annotations in source order, and the problems (malformed
/// ones, and second annotations of an already annotated function) as formatted kSpec errors.
struct AnnotationScan {
  std::vector<Annotation> annotations;
  std::vector<Error> errors;
};

/// Reads the annotations of every source. `tokens[i]` are the tokens of `sources[i]` after
/// DropDisabledBranches, so only line comments of live code count: never block comments,
/// strings, raw strings or preprocessor lines. In a comment, `@BE`/`@jaxcc` must come first
/// (after the slashes and blanks); a later `//` ends the token list, so `// @BE f arg ret //
/// note` has two tokens. A trailing `sharding="RULE"` (blanks allowed inside the quotes) is
/// not a token: it fills `sharding`; so does a trailing `tune="..."` fill `tune`, in either order.
AnnotationScan FindAnnotations(const std::vector<SourceFile>& sources,
                               const std::vector<std::vector<Token>>& tokens);

}  // namespace jaxcc::signature
