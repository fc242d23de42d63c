// Finds the function declarations at namespace scope of one source, with their namespaces.
#pragma once

#include <string>
#include <vector>

#include "signature/lexer.h"
#include "signature/parameters.h"

namespace jaxcc::signature {

/// One function declarator at namespace scope (prototype or definition).
struct Declaration {
  std::string name;
  /// Path to call it from global scope, e.g. {"ops", "detail"}. Anonymous namespaces are left
  /// out: their members are callable unqualified from the same translation unit.
  std::vector<std::string> namespaces;
  bool in_anonymous_namespace = false;
  bool is_template = false;
  bool is_definition = false;
  bool is_cuda_kernel = false;  ///< declared `__global__`
  /// False when the parameter list never reaches its `)` (cut-off or unbalanced source): the
  /// parameters are then a guess, and exporting the function would fail in the compiler with a
  /// message about jaxcc's generated code instead of the user's line.
  bool params_closed = true;
  int source_index = 0;
  Token name_token;
  Token close_paren;  ///< the `)` ending the parameter list
  std::vector<ParsedParam> params;

  /// "::ops::f(const Tensor&, Tensor&)": how messages name one overload.
  std::string QualifiedSignature() const;
};

/// A namespace block: byte offsets of its braces and the call path inside it.
struct NamespaceRange {
  size_t begin = 0;  ///< offset of `{`
  size_t end = 0;    ///< offset of the matching `}` (end of input if never closed)
  std::vector<std::string> namespaces;
};

struct SourceScan {
  std::vector<Declaration> declarations;  ///< in source order
  std::vector<NamespaceRange> ranges;
};

/// Scans `code` (tokens of one source with comments and directives removed) for function
/// declarators at namespace scope: bodies of functions and classes and all initializers are
/// skipped, `namespace a { namespace b {`, `namespace a::b {`, `inline namespace`, anonymous
/// namespaces and `extern "C" { }` blocks are tracked. A declarator is a name followed by `(`
/// that some type precedes (so a macro invocation such as `GEN(f32, float)` does not count),
/// before any top-level `=`; `void ns::f(...)` is recorded with `ns` appended.
SourceScan ScanDeclarations(const std::vector<Token>& code, int source_index);

/// The call path of the innermost namespace containing `offset`.
std::vector<std::string> NamespacesAt(const std::vector<NamespaceRange>& ranges, size_t offset);

}  // namespace jaxcc::signature
