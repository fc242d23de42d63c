// The macros a compile command defines and undefines (`-D`, `-U`): the preprocessor reads them
// before the first line of the source, so jaxcc's conditionals and expansions must too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "signature/macro_definition.h"

namespace jaxcc::signature {

/// One `-D`/`-U` in command-line order (later ones override earlier ones, as in g++ and nvcc).
struct CommandLineMacro {
  std::string name;
  /// The definition for `-D` (`-DX` defines X as 1, `-DX=` as nothing, `-DF(a)=a` a function-like
  /// macro); nullopt for `-U`.
  std::optional<MacroDefinition> definition;
  std::string flag;  ///< the flag as the user wrote it, for messages: "-DREAL=double"
};

/// The `-D`/`-U` flags of one compile command: `-DX`, `-D X`, `-UX`, `-U X`, and nvcc's
/// `--define-macro`/`--undefine-macro` (with `=` or a separate value). Every other flag is
/// ignored. A `-D` whose name is no identifier is skipped (the compiler rejects it). The
/// definitions' tokens are positioned nowhere in any source (line 0), and
/// `MacroDefinition::flag` names the flag.
std::vector<CommandLineMacro> MacrosFromFlags(const std::vector<std::string>& flags);

}  // namespace jaxcc::signature
