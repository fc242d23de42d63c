// Turns user sources plus an optional `functions` request into fully typed FunctionSpecs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "argspec/function_spec.h"
#include "signature/tune_annotation.h"
#include "util/result.h"

namespace jaxcc::signature {

/// One translation unit as the user wrote it. `label` is what diagnostics print: "<module>" for
/// inline sources, the real path for files.
struct SourceFile {
  std::string label;
  std::string text;
};

/// One entry of the user's `functions` argument: a name, with tokens (dict form) or without
/// (list form, meaning "infer from the signature").
struct FunctionRequest {
  std::string name;
  std::optional<std::vector<std::string>> tokens;
};

/// Resolves the specs of a module.
///  - `requests == nullopt`: every `// @BE <name> [tokens...]` annotation in real line comments of
///    every source; none at all is an error telling the user to annotate or pass `functions`.
///  - a request with tokens: parsed, then cross-checked against the C++ declaration when one is
///    found (count, order, kinds, attr types); bare `attr.x` types come from the declaration.
///  - a request without tokens: inferred from the declaration; not found is an error.
/// Every error is ErrorKind::kSpec or kSignature, formatted as `label:line:col: error: ...` with
/// the source line and a caret when a location exists. Order of the result = order of requests
/// (or of annotations).
/// `source_flags[i]` are the flags source i is compiled with (missing = none): their `-D`/`-U`
/// are read before the source, as the compiler reads them (decision 147).
/// A resolved function's `tune="..."` annotation is always checked (errors point into it); when
/// `tune` is given it receives, per function in order, the parameters those flags leave open
/// (decision 159a).
Result<std::vector<argspec::FunctionSpec>> ResolveSpecs(
    const std::vector<SourceFile>& sources,
    const std::optional<std::vector<FunctionRequest>>& requests,
    const std::vector<std::vector<std::string>>& source_flags = {},
    std::vector<TuneDeclaration>* tune = nullptr);

}  // namespace jaxcc::signature
