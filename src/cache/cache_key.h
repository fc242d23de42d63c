// The cache key: SHA-256 over a typed, length-prefixed encoding of every input of a build.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jaxcc::cache {

struct KeyInputs {
  std::string jaxcc_version;
  std::string platform;  ///< "cpu" or "cuda"
  std::string module_name;
  std::vector<std::pair<std::string, std::string>> sources;  ///< (label, text)
  std::string specs;  ///< canonical text of every FunctionSpec
  std::vector<std::string> compile_flags;
  std::vector<std::string> link_flags;
  std::vector<std::string> include_paths;
  std::string compiler_path;
  std::string compiler_version;
  std::string header_digest;  ///< digest of the XLA FFI and jaxcc kernel headers
  /// Further tools and their versions ("nvcc", path, version) — empty for CPU builds.
  std::vector<std::string> toolchain;
  /// Options that change generated code rather than flags ("allow_cuda_graph=1").
  std::vector<std::string> codegen_options;
  /// What the tools read beyond the request (pipeline/build_world.h, decisions 170-174): the
  /// environment variables they document, each compiler's content digest, the target
  /// `-march=native` chose here, and every file the flags name by its SHA-256.
  std::vector<std::string> world;
};

/// 64 lowercase hex characters. Changing any field (or the order of list entries) changes it.
std::string ComputeKey(const KeyInputs& inputs);

/// The same inputs as a JSON object (sources reduced to their SHA-256), stored in the manifest.
std::string DescribeKeyInputs(const KeyInputs& inputs);

}  // namespace jaxcc::cache
