// The files and directories a request's flags name (decision 174): response files expanded
// (recursively), files named by a flag (`-include`, `-imacros`, `-fplugin=`, `-specs=`,
// `-fprofile-use=`, sanitizer lists, linker scripts, `-Wl,@file`, `-Wl,--version-script=`,
// ...), and the include and library directories. Flags are text in the key; what they name is
// keyed by its bytes here and watched by the entry, so editing a named file rebuilds.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::pipeline {

struct FlagFiles {
  /// For the key: "<path>\t<sha256>" per file read, "<path>\tabsent" per named file that does not
  /// exist, in the order met.
  std::vector<std::string> key;
  std::vector<std::string> files;        ///< regular files the flags name (absolute)
  std::vector<std::string> absent;       ///< files a flag names that do not exist (absolute)
  std::vector<std::string> directories;  ///< directories the flags name (absolute)
  /// The compiler's words with every response file expanded, and the linker's (from -Wl, and
  /// -Xlinker, with `-Wl,@file` expanded): what the include and native scans read.
  std::vector<std::string> compiler_words;
  std::vector<std::string> linker_words;
};

/// Every file and directory `flags` name. Paths resolve against the current directory (the
/// compiler runs in a build directory, where a relative path names nothing of the user's). A
/// response file nested deeper than 16 (a cycle) is an ErrorKind::kSpec error naming it.
Result<FlagFiles> FilesNamedByFlags(const std::vector<std::string>& flags);

/// A response file's words, by GCC's rules: whitespace separates, single or double quotes keep
/// whitespace, a backslash keeps the next character.
std::vector<std::string> SplitResponseFile(const std::string& text);

}  // namespace jaxcc::pipeline
