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
  // A trailing `sharding="RULE"` holds blanks, so it is cut off before splitting into words.
  std::optional<std::string> sharding;
  Span sharding_span;
  size_t stop = std::min(text.find("//", pos), text.find('\n', pos));
  size_t key = text.find("sharding=", pos);
  std::string_view words_text = text;
  if (key != std::string_view::npos && key < stop) {
    size_t open = key + 9;
    size_t close =
        open < text.size() && text[open] == '"' ? text.find('"', open + 1) : std::string_view::npos;
    if (close == std::string_view::npos || close > stop) {
      scan->errors.push_back(AnnotationError(
          source, WordSpan(comment, key, std::min(stop, text.size()) - key),
          "write the rule in double quotes on the annotation's line, e.g. `sharding=\"b i, i "
          "-> b i\"`"));
      return;
    }
    size_t rest = close + 1;
    while (rest < text.size() && rest < stop && IsBlank(text[rest])) ++rest;
    if (rest < stop && rest < text.size()) {
      scan->errors.push_back(AnnotationError(source, WordSpan(comment, rest, 1),
                                             "`sharding=\"...\"` must be the annotation's last "
                                             "item; move the tokens before it"));
      return;
    }
    sharding = std::string(text.substr(open + 1, close - open - 1));
    sharding_span = WordSpan(comment, open + 1, std::max<size_t>(1, close - open - 1));
    words_text = text.substr(0, key);
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
  annotation.sharding = std::move(sharding);
  annotation.sharding_span = sharding_span;
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
