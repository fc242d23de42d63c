// Entry points that a macro invocation stamps out: found in the sources' expansions, with
// diagnostics that point at the annotation, the invocation and the `#define` (decision 87).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "signature/annotations.h"
#include "signature/declarations.h"
#include "signature/expanded_source.h"
#include "signature/lookup.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::signature {

/// Every source expanded, and the declarations read from the expansions.
struct ExpandedModule {
  std::vector<ExpandedSource> sources;
  std::vector<Declaration> declarations;
  DeclarationIndex index;  ///< points into `declarations`
};

/// Expands each source (`active[i]`: tokens after DropDisabledBranches) and scans the results.
/// Only called when some requested function is not declared as written, so sources whose
/// entry points are plain declarations never pay for it.
/// `flags[i]` are source i's command-line macros (none when `flags` is shorter).
std::unique_ptr<ExpandedModule> ExpandModule(
    const std::vector<std::vector<Token>>& active,
    const std::vector<std::vector<CommandLineMacro>>& flags = {});

/// The declaration of `name` that macro expansion produces, or nullptr when none does.
/// kSignature errors, at the annotation when there is one: one invocation stamping out two
/// definitions of `name`, a declaration that only exists through a macro referring to itself,
/// and FindFunction's (overloads, templates, kernels, unclosed parameter lists).
Result<const Declaration*> FindStamped(const std::string& name, const ExpandedModule& expanded,
                                       const std::vector<SourceFile>& sources,
                                       const Annotation* annotation);

/// Notes for an error about a stamped declaration: the invocation that produced it, the
/// `#define` that spelled it, and the annotation (each "label:line:col: note: ..." with a caret,
/// each on its own line, starting with a newline).
std::string StampedNotes(const Declaration& decl, const ExpandedModule& expanded,
                         const std::vector<SourceFile>& sources, const Annotation* annotation);

/// Why the annotated (or requested) `name` was not produced by a macro, when macros explain
/// it: the invocation right after the annotation cannot be expanded (arguments never closed, a
/// wrong argument count), refers to itself, or expands to no function of that name; or the
/// expansion stopped at a bound. nullopt when macros have nothing to do with it.
/// `next_code` is the first code token after the annotation in its source (nullptr if none).
std::optional<Error> WhyNotStamped(const std::string& name, const ExpandedModule& expanded,
                                   const std::vector<SourceFile>& sources,
                                   const Annotation* annotation, const Token* next_code);

}  // namespace jaxcc::signature
