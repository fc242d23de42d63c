// The JSON manifest stored beside each cached library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::cache {

/// A file the build read (from the compiler's depfiles) that is not covered by the key itself.
struct Dependency {
  std::string path;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;
};

struct Manifest {
  int schema = 1;
  std::string key;
  std::string module_name;
  std::string library_file;    ///< file name inside the entry directory
  std::string library_sha256;  ///< checked before every dlopen
  std::string jaxcc_version;
  std::vector<std::string> function_names;
  std::vector<Dependency> dependencies;
  std::string inputs_json;  ///< free-form JSON object describing the key inputs (for humans)
  double build_seconds = 0;
  std::int64_t created_unix = 0;
};

std::string ManifestToJson(const Manifest& manifest);
/// Fails with ErrorKind::kCache on malformed JSON or missing fields.
Result<Manifest> ManifestFromJson(const std::string& text);

}  // namespace jaxcc::cache
