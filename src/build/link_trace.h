// What the linker read (decision 175): its own trace (`--trace`, which GNU ld, gold, lld and mold
// all print), one input file per line, written beside the library by the link rule.
#pragma once

#include <string>
#include <vector>

namespace jaxcc::build {

/// The file the link rule writes the trace of `output` to (relative like `output`).
std::string LinkTraceFile(const std::string& output);

/// The files of a trace, as written ("./liba.a", "/usr/lib/.../crti.o"), archive members
/// reduced to their archive ("liba.a(a.o)" and "(liba.a)a.o" are "liba.a"), each once, in order.
/// Shared libraries (`.so`, `.so.N`) are left out: they are loaded at run time, so a rebuilt one
/// is what the module runs anyway, and the link only checked their symbols. Lines that are not
/// files (a linker's "mode elf_x86_64" note) are skipped.
std::vector<std::string> ParseLinkTrace(const std::string& text);

}  // namespace jaxcc::build
