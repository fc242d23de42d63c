// `tune="BLOCK=16,32,64; UNROLL=1,2,4"` on a function's annotation: the compile-time parameters
// jaxcc's tuner may choose, declared in the source (issue 40; decision 159a). The signature stage
// reads and checks the text; Python expands it into one build per configuration.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace jaxcc::signature {

/// One macro and its candidate values, in the order written.
struct TuneParameter {
  std::string name;                 ///< a macro name: `[A-Za-z_][A-Za-z0-9_]*`
  std::vector<std::string> values;  ///< tokens `-?[A-Za-z0-9_]+`, each once
};

/// The tune= of one function's annotation, less the parameters the compile flags already define
/// (`-DBLOCK=32` fixes BLOCK: what is left is still open).
struct TuneDeclaration {
  std::string function;
  std::vector<TuneParameter> parameters;
  std::string where;  ///< `label:line:column` of the tune text, for messages
};

struct Annotation;
struct SourceFile;
struct CommandLineMacro;

/// The annotation's `tune="..."`, if any, checked (kSpec errors formatted with a caret into the
/// text); then, when `tune` is not null, the parameters `flags` (the source's -D/-U) leave
/// undefined appended to it as `function`'s declaration (none left: nothing appended).
Status ReadAnnotationTune(const Annotation& annotation, const SourceFile& source,
                          const std::vector<CommandLineMacro>& flags, const std::string& function,
                          std::vector<TuneDeclaration>* tune);

/// Parses the text between the quotes: `NAME=V1,V2,...` groups separated by `;`, blanks allowed
/// around every item. On an error (kSpec, the message naming the problem and the fix)
/// `*error_at` is the offset into `text` to point the caret at.
Result<std::vector<TuneParameter>> ParseTuneText(std::string_view text, size_t* error_at);

}  // namespace jaxcc::signature
