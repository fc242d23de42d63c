// The tune= text is parsed here, not in Python, so that its errors point into the annotation with
// the signature stage's caret diagnostics before any toolchain runs.
#include "signature/tune_annotation.h"

#include <algorithm>

#include "signature/annotations.h"
#include "signature/command_line_macros.h"
#include "signature/diagnostic.h"

namespace jaxcc::signature {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr const char* kExample = "e.g. tune=\"BLOCK=16,32,64; UNROLL=1,2\"";

// `text[begin, end)` without the blanks at either end; `*at` is where what is left starts.
std::string_view Trimmed(std::string_view text, size_t begin, size_t end, size_t* at) {
  while (begin < end && IsBlank(text[begin])) ++begin;
  while (end > begin && IsBlank(text[end - 1])) --end;
  *at = begin;
  return text.substr(begin, end - begin);
}

Error At(size_t offset, size_t* error_at, const std::string& message) {
  *error_at = offset;
  return MakeError(ErrorKind::kSpec, message);
}

bool IsMacroName(std::string_view name) {
  return !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
         std::all_of(name.begin(), name.end(), IsWordChar);
}

// A value is what `-DNAME=VALUE` passes through every compiler unchanged and what a target name
// (`<prefix>@tune-NAME<VALUE>`) can spell.
bool IsValueToken(std::string_view value) {
  if (!value.empty() && value[0] == '-') value.remove_prefix(1);
  return !value.empty() && std::all_of(value.begin(), value.end(), IsWordChar);
}

Result<TuneParameter> ParseGroup(std::string_view text, size_t begin, size_t end,
                                 size_t* error_at) {
  size_t at = 0;
  std::string_view group = Trimmed(text, begin, end, &at);
  size_t equals = text.find('=', at);
  if (group.empty() || equals == std::string_view::npos || equals >= at + group.size()) {
    return At(group.empty() ? begin : at, error_at,
              "tune=: each parameter is NAME=V1,V2,... (groups separated by ';'), " +
                  std::string(kExample));
  }
  size_t name_at = 0;
  std::string_view name = Trimmed(text, at, equals, &name_at);
  if (!IsMacroName(name)) {
    return At(name_at, error_at,
              "tune=: '" + std::string(name) +
                  "' is not a macro name (letters, digits, '_', not starting with a digit); " +
                  kExample);
  }
  TuneParameter parameter{std::string(name), {}};
  size_t item = equals + 1;
  const size_t group_end = at + group.size();
  while (true) {
    size_t comma = std::min(text.find(',', item), group_end);
    size_t value_at = 0;
    std::string_view value = Trimmed(text, item, comma, &value_at);
    if (value.empty()) {
      return At(value_at, error_at,
                "tune=: parameter " + parameter.name +
                    " has an empty candidate; list values separated by commas, e.g. " +
                    parameter.name + "=16,32");
    }
    if (!IsValueToken(value)) {
      return At(value_at, error_at,
                "tune=: candidate '" + std::string(value) + "' of " + parameter.name +
                    " is not an int, bool or identifier token (it becomes -D" + parameter.name +
                    "=VALUE and part of a target name)");
    }
    if (std::find(parameter.values.begin(), parameter.values.end(), value) !=
        parameter.values.end()) {
      return At(value_at, error_at,
                "tune=: " + parameter.name + " lists " + std::string(value) + " twice");
    }
    parameter.values.emplace_back(value);
    if (comma >= group_end) break;
    item = comma + 1;
  }
  return parameter;
}

}  // namespace

Result<std::vector<TuneParameter>> ParseTuneText(std::string_view text, size_t* error_at) {
  *error_at = 0;
  std::vector<TuneParameter> parameters;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = std::min(text.find(';', begin), text.size());
    size_t at = 0;
    bool last = end == text.size();
    // A `;` after the last group is allowed; an empty group elsewhere is not.
    if (!(last && !parameters.empty() && Trimmed(text, begin, end, &at).empty())) {
      auto parameter = ParseGroup(text, begin, end, error_at);
      if (!parameter.ok()) return parameter.error();
      for (const TuneParameter& earlier : parameters) {
        if (earlier.name == parameter->name) {
          Trimmed(text, begin, end, &at);
          return At(at, error_at,
                    "tune=: parameter " + earlier.name + " is given twice; list its values once");
        }
      }
      parameters.push_back(std::move(*parameter));
    }
    if (last) break;
    begin = end + 1;
  }
  return parameters;
}

Status ReadAnnotationTune(const Annotation& annotation, const SourceFile& source,
                          const std::vector<CommandLineMacro>& flags, const std::string& function,
                          std::vector<TuneDeclaration>* tune) {
  if (!annotation.tune) return OkStatus();
  size_t offset = 0;
  auto parameters = ParseTuneText(*annotation.tune, &offset);
  if (!parameters.ok()) {
    Span span = annotation.tune_span;
    span.column += static_cast<int>(offset);
    span.length = 1;
    return MakeError(ErrorKind::kSpec, FormatDiagnostic(source.label, source.text, span, "error",
                                                        "function `" + function +
                                                            "`: " + parameters.error().message));
  }
  if (tune == nullptr) return OkStatus();
  TuneDeclaration declared{function, {}, ""};
  for (TuneParameter& parameter : *parameters) {
    bool defined = false;  // the last -D/-U of the name decides, as in the compiler
    for (const CommandLineMacro& macro : flags) {
      if (macro.name == parameter.name) defined = macro.definition.has_value();
    }
    if (!defined) declared.parameters.push_back(std::move(parameter));
  }
  if (declared.parameters.empty()) return OkStatus();
  declared.where = source.label + ":" + std::to_string(annotation.tune_span.line) + ":" +
                   std::to_string(annotation.tune_span.column);
  tune->push_back(std::move(declared));
  return OkStatus();
}

}  // namespace jaxcc::signature
