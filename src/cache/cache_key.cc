// The key encoding. Every field goes in as (type tag, field name, value), each length-prefixed by
// Sha256Builder::UpdateField, and lists carry their count, so no two different KeyInputs encode to
// the same bytes. Bump kKeySchema whenever a field is added, removed or reordered.
#include "cache/cache_key.h"

#include <nlohmann/json.hpp>

#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

constexpr const char* kKeySchema = "jaxcc-cache-key-v3";

void AddString(Sha256Builder& hash, std::string_view name, std::string_view value) {
  hash.UpdateField("str");
  hash.UpdateField(name);
  hash.UpdateField(value);
}

void AddList(Sha256Builder& hash, std::string_view name, const std::vector<std::string>& items) {
  hash.UpdateField("list");
  hash.UpdateField(name);
  hash.UpdateField(std::to_string(items.size()));
  for (const std::string& item : items) hash.UpdateField(item);
}

void AddSources(Sha256Builder& hash,
                const std::vector<std::pair<std::string, std::string>>& sources) {
  hash.UpdateField("pairs");
  hash.UpdateField("sources");
  hash.UpdateField(std::to_string(sources.size()));
  for (const auto& [label, text] : sources) {
    hash.UpdateField(label);
    hash.UpdateField(text);
  }
}

}  // namespace

std::string ComputeKey(const KeyInputs& inputs) {
  Sha256Builder hash;
  hash.UpdateField(kKeySchema);
  AddString(hash, "jaxcc_version", inputs.jaxcc_version);
  AddString(hash, "platform", inputs.platform);
  AddString(hash, "module_name", inputs.module_name);
  AddSources(hash, inputs.sources);
  AddString(hash, "specs", inputs.specs);
  AddList(hash, "compile_flags", inputs.compile_flags);
  AddList(hash, "link_flags", inputs.link_flags);
  AddList(hash, "include_paths", inputs.include_paths);
  AddString(hash, "compiler_path", inputs.compiler_path);
  AddString(hash, "compiler_version", inputs.compiler_version);
  AddString(hash, "header_digest", inputs.header_digest);
  AddList(hash, "toolchain", inputs.toolchain);
  AddList(hash, "codegen_options", inputs.codegen_options);
  AddList(hash, "world", inputs.world);
  return hash.FinishHex();
}

std::string DescribeKeyInputs(const KeyInputs& inputs) {
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& [label, text] : inputs.sources) {
    sources.push_back({{"label", label}, {"sha256", Sha256Hex(text)}});
  }
  nlohmann::json description = {
      {"schema", kKeySchema},
      {"jaxcc_version", inputs.jaxcc_version},
      {"platform", inputs.platform},
      {"module_name", inputs.module_name},
      {"sources", std::move(sources)},
      {"specs", inputs.specs},
      {"compile_flags", inputs.compile_flags},
      {"link_flags", inputs.link_flags},
      {"include_paths", inputs.include_paths},
      {"compiler_path", inputs.compiler_path},
      {"compiler_version", inputs.compiler_version},
      {"header_digest", inputs.header_digest},
      {"toolchain", inputs.toolchain},
      {"codegen_options", inputs.codegen_options},
      {"world", inputs.world},
  };
  // Flags and paths are bytes, not necessarily UTF-8: replace bad sequences rather than throw.
  return description.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace jaxcc::cache
