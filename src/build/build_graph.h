// What to build: compile steps (each its own translation unit) and one link step.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

struct CompileStep {
  std::string source;  ///< file name relative to the build directory
  std::string object;  ///< file name relative to the build directory
  /// Compiler and flags, without -c/-o/depfile options (the ninja rule adds those).
  std::vector<std::string> command;
  /// Flags that change how the compiler runs, not what it makes (nvcc's --threads): placed in the
  /// rule after `command`, never part of what an object is keyed by, so the same unit built
  /// with more or fewer threads is the same object.
  std::vector<std::string> scheduling_flags;
};

struct BuildGraph {
  std::vector<CompileStep> compiles;
  /// Objects already in the build directory (a reused wrapper object): linked, never compiled.
  std::vector<std::string> prebuilt_objects;
  std::vector<std::string> link_command;  ///< linker driver and flags placed before the objects
  std::vector<std::string> link_flags;    ///< placed after the objects (libraries, -Wl,...)
  std::string output;                     ///< library file name relative to the build directory
  /// compile_commands.json for editors (clangd): how each of the user's source files is
  /// compiled; written into the build directory beside build.ninja when not empty.
  std::string compile_database;
};

/// The text of build.ninja for `graph`. Every compile step gets its own rule (steps may use
/// different compilers) with a gcc-style depfile, so header edits trigger rebuilds.
std::string RenderNinjaFile(const BuildGraph& graph);

}  // namespace jaxcc::build
