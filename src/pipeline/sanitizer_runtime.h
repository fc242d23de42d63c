// A CPU module built with AddressSanitizer (the debug profile's `asan`, or a user's own
// -fsanitize=address) against the compiler that builds it and the process that loads it: the link
// flag its runtime needs, and whether this process has that runtime (decision 168). One owner:
// the Python layer only chooses the flags.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/load_request.h"
#include "toolchain/host_compiler.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Whether `request` instruments host code with AddressSanitizer (-fsanitize=... naming
/// `address` in its C++ compile or link flags).
bool AsksForAddressSanitizer(const LoadRequest& request);

/// The link flags a sanitized shared library needs from `compiler`: Clang's driver links the
/// sanitizer runtime into a shared library only with -shared-libsan (without it every
/// __asan_/__ubsan_ reference is undefined under -z defs); GCC's links libasan itself. Empty when
/// the request asks for no sanitizer or already chose (-shared-libsan, -static-libsan).
std::vector<std::string> SanitizerLinkFlags(const LoadRequest& request,
                                            const toolchain::HostCompiler& compiler);

/// Ok unless `request` asks for AddressSanitizer and `maps` (/proc/self/maps' text) lacks
/// `compiler`'s ASan runtime (GCC's libasan, Clang's libclang_rt.asan), where the dlopen would
/// end the process ("ASan runtime does not come first") or fail on the other's runtime: then a
/// LoadError naming the module and the command that preloads the right runtime.
Status CheckAddressSanitizerRuntime(const LoadRequest& request, std::string_view maps,
                                    const toolchain::HostCompiler& compiler);

/// The current process's /proc/self/maps ("" where it cannot be read).
std::string ReadOwnMaps();

}  // namespace jaxcc::pipeline
