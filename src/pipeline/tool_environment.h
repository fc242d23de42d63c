// The environment variables a build's tools read that can change what they make: the one list,
// read by the cache key and the warm index alike (docs/cache.md, "What a build reads").
#pragma once

#include <string>
#include <vector>

namespace jaxcc::pipeline {

/// The variables read for a module of `platform` ("cpu" or "cuda"), in a fixed order.
std::vector<const char*> ToolEnvironmentNames(const std::string& platform);

/// Each of ToolEnvironmentNames as "NAME=value", or "NAME" alone when unset (an empty value is
/// not an unset one: GCC reads an empty CPATH element as the current directory).
std::vector<std::string> ToolEnvironment(const std::string& platform);

/// The directories of the include-path variables (CPATH, CPLUS_INCLUDE_PATH, C_INCLUDE_PATH) as
/// the compiler searches them, empty elements as "." (GCC's rule), for the directory watch.
std::vector<std::string> IncludePathVariableDirs();

}  // namespace jaxcc::pipeline
