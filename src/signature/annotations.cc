// Annotations are parsed from comment tokens, so whatever the lexer proves is not a line comment
// (a string, a raw string, a block comment, a directive) can never be mistaken for one.
#include "signature/annotations.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "argspec/arg_spec.h"

namespace jaxcc::signature {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

struct Word {
  std::string text;
  size_t at;  // index in the comment text
};

// Blank-separated words of `text` from `pos`, stopping at a nested `//` or the end of the line.
std::vector<Word> Words(std::string_view text, size_t pos) {
  std::vector<Word> words;
  size_t stop = std::min(text.find("//", pos), text.find('\n', pos));
  if (stop == std::string_view::npos) stop = text.size();
  while (pos < stop) {
    while (pos < stop && IsBlank(text[pos])) ++pos;
    size_t begin = pos;
    while (pos < stop && !IsBlank(text[pos])) ++pos;
    if (pos > begin) words.push_back({std::string(text.substr(begin, pos - begin)), begin});
  }
  return words;
}

Span WordSpan(const Token& comment, size_t at, size_t length) {
  return Span{comment.line, comment.column + static_cast<int>(at), static_cast<int>(length)};
}

// Position of the word after the marker, or npos when `comment` is no annotation at all.
size_t AfterMarker(std::string_view text, size_t* marker_at) {
  size_t pos = 0;
  while (pos < text.size() && text[pos] == '/') ++pos;  // `//`, or `///` doc comments
  while (pos < text.size() && IsBlank(text[pos])) ++pos;
  *marker_at = pos;
  for (std::string_view marker : {"@BE", "@jaxcc"}) {
    if (text.compare(pos, marker.size(), marker) != 0) continue;
    size_t end = pos + marker.size();
    if (end == text.size() || IsBlank(text[end]) || text[end] == '\n') return end;
  }
  return std::string_view::npos;
}

Error AnnotationError(const SourceFile& source, const Span& span, const std::string& message) {
  return MakeError(ErrorKind::kSpec,
                   FormatDiagnostic(source.label, source.text, span, "error", message));
}

// The `KEY="..."` items an annotation may end with.
struct QuotedItems {
  std::optional<std::string> sharding;
  Span sharding_span;
  std::optional<std::string> tune;
  Span tune_span;
};

constexpr std::string_view kItemKeys[] = {"sharding=", "tune="};

// Where the first `sharding=` or `tune=` that starts a word lies in [pos, stop), or npos.
size_t NextItemKey(std::string_view text, size_t pos, size_t stop) {
  size_t first = std::string_view::npos;
  for (std::string_view key : kItemKeys) {
    for (size_t at = text.find(key, pos); at != std::string_view::npos && at < stop;
         at = text.find(key, at + 1)) {
      if (at == pos || IsBlank(text[at - 1])) {
        first = std::min(first, at);
        break;
      }
    }
  }
  return first;
}

// Reads the items from `at` to `stop` into `items`; false (an error appended) when one is not
// quoted, is given twice, or is followed by anything but another item.
bool ReadQuotedItems(const SourceFile& source, const Token& comment, size_t at, size_t stop,
                     QuotedItems* items, AnnotationScan* scan) {
  std::string_view text = comment.text;
  stop = std::min(stop, text.size());
  while (at < stop) {
    bool is_tune = text.compare(at, 5, "tune=") == 0;
    std::string_view key = is_tune ? "tune" : "sharding";
    size_t open = at + key.size() + 1;
    size_t close =
        open < text.size() && text[open] == '"' ? text.find('"', open + 1) : std::string_view::npos;
    if (close == std::string_view::npos || close > stop) {
      scan->errors.push_back(AnnotationError(
          source, WordSpan(comment, at, stop - at),
          is_tune ? "write the candidates in double quotes on the annotation's line, e.g. "
                    "`tune=\"BLOCK=16,32,64; UNROLL=1,2\"`"
                  : "write the rule in double quotes on the annotation's line, e.g. `sharding=\"b "
                    "i, i -> b i\"`"));
      return false;
    }
    std::optional<std::string>& slot = is_tune ? items->tune : items->sharding;
    if (slot) {
      scan->errors.push_back(AnnotationError(
          source, WordSpan(comment, at, key.size()),
          "`" + std::string(key) + "=` is given twice on one annotation; keep one"));
      return false;
    }
    slot = std::string(text.substr(open + 1, close - open - 1));
    (is_tune ? items->tune_span : items->sharding_span) =
        WordSpan(comment, open + 1, std::max<size_t>(1, close - open - 1));
    size_t rest = close + 1;
    while (rest < stop && IsBlank(text[rest])) ++rest;
    if (rest >= stop) break;
    if (NextItemKey(text, rest, stop) != rest) {
      scan->errors.push_back(AnnotationError(source, WordSpan(comment, rest, 1),
                                             "`" + std::string(key) +
                                                 "=\"...\"` must be the annotation's last "
                                                 "item (with sharding= or tune=); move the tokens "
                                                 "before it"));
      return false;
    }
    at = rest;
  }
  return true;
}

// One comment of `sources[source_index]`: appends an annotation or an error to `scan`, or
// nothing when the comment is no annotation.
void ReadComment(const std::vector<SourceFile>& sources, int source_index, const Token& comment,
                 std::unordered_map<std::string, size_t>* first_of, AnnotationScan* scan) {
  const SourceFile& source = sources[source_index];
  std::string_view text = comment.text;
  size_t marker_at = 0;
  size_t pos = AfterMarker(text, &marker_at);
  if (pos == std::string_view::npos) return;
  std::string marker(text.substr(marker_at, pos - marker_at));
  // Trailing `sharding="RULE"` and `tune="..."` items hold blanks, so they are cut off before
  // splitting into words.
  QuotedItems items;
  size_t stop = std::min(text.find("//", pos), text.find('\n', pos));
  std::string_view words_text = text;
  size_t first_item = NextItemKey(text, pos, stop);
  if (first_item != std::string_view::npos) {
    if (!ReadQuotedItems(source, comment, first_item, stop, &items, scan)) return;
    words_text = text.substr(0, first_item);
  }
  std::vector<Word> words = Words(words_text, pos);
  if (words.empty()) {
    scan->errors.push_back(AnnotationError(source, WordSpan(comment, marker_at, marker.size()),
                                           "`// " + marker + "` names no function; write `// " +
                                               marker + " <function> [tokens...]`, e.g. `// " +
                                               marker + " vector_add arg arg ret`"));
    return;
  }
  Annotation annotation;
  annotation.function = words[0].text;
  annotation.sharding = std::move(items.sharding);
  annotation.sharding_span = items.sharding_span;
  annotation.tune = std::move(items.tune);
  annotation.tune_span = items.tune_span;
  annotation.source_index = source_index;
  annotation.offset = comment.offset;
  annotation.function_span = WordSpan(comment, words[0].at, words[0].text.size());
  const Word& last = words.back();
  annotation.comment_span = WordSpan(comment, marker_at, last.at + last.text.size() - marker_at);
  Status name_ok = argspec::ValidateFunctionName(annotation.function);
  if (!name_ok.ok()) {
    scan->errors.push_back(
        AnnotationError(source, annotation.function_span, name_ok.error().message));
    return;
  }
  if (words.size() > 1) {
    annotation.tokens.emplace();
    for (size_t i = 1; i < words.size(); ++i) {
      annotation.tokens->push_back(words[i].text);
      annotation.token_spans.push_back(WordSpan(comment, words[i].at, words[i].text.size()));
    }
  }
  auto [earlier_at, inserted] = first_of->emplace(annotation.function, scan->annotations.size());
  if (!inserted) {
    const Annotation& earlier = scan->annotations[earlier_at->second];
    std::string first = sources[earlier.source_index].label + ":" +
                        std::to_string(earlier.function_span.line) + ":" +
                        std::to_string(earlier.function_span.column);
    scan->errors.push_back(AnnotationError(source, annotation.function_span,
                                           "`" + annotation.function +
                                               "` is annotated twice (first at " + first +
                                               "); keep one annotation per function"));
    return;
  }
  scan->annotations.push_back(std::move(annotation));
}

}  // namespace

AnnotationScan FindAnnotations(const std::vector<SourceFile>& sources,
                               const std::vector<std::vector<Token>>& tokens) {
  AnnotationScan scan;
  std::unordered_map<std::string, size_t> first_of;  // function -> index in scan.annotations
  for (size_t i = 0; i < sources.size() && i < tokens.size(); ++i) {
    for (const Token& token : tokens[i]) {
      if (token.kind != TokenKind::kLineComment) continue;
      ReadComment(sources, static_cast<int>(i), token, &first_of, &scan);
    }
  }
  return scan;
}

}  // namespace jaxcc::signature
