#include "pipeline/warm_index.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {
namespace {

using nlohmann::json;

// A record's first field: a record of another layout is a miss, never misread.
constexpr const char* kFormat = "jaxcc-warm-index-1";

void Field(Sha256Builder& hash, std::string_view name, std::string_view value) {
  hash.UpdateField(name);
  hash.UpdateField(value);
}

void Fields(Sha256Builder& hash, std::string_view name, const std::vector<std::string>& values) {
  Field(hash, name, std::to_string(values.size()));
  for (const std::string& value : values) hash.UpdateField(value);
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "\x01unset";  // unset and empty differ for the tool searches
}

Error Corrupt(const std::string& what) {
  return MakeError(ErrorKind::kCache, "warm index record: " + what);
}

std::vector<std::string> StringList(const json& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const json& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

std::string WarmFingerprint(const LoadRequest& request, const BuildEnvironment& env) {
  Sha256Builder hash;
  Field(hash, "format", kFormat);
  Field(hash, "jaxcc", JAXCC_VERSION);
  Field(hash, "name", request.name);
  Field(hash, "platform", request.platform);
  Field(hash, "sources", std::to_string(request.sources.size()));
  for (const auto& source : request.sources) {
    hash.UpdateField(source.label);
    hash.UpdateField(source.text);
  }
  if (request.functions) {
    Field(hash, "functions", std::to_string(request.functions->size()));
    for (const auto& function : *request.functions) {
      hash.UpdateField(function.name);
      if (function.tokens) {
        Fields(hash, "tokens", *function.tokens);
      } else {
        hash.UpdateField("inferred");
      }
    }
  } else {
    Field(hash, "functions", "annotations");
  }
  Fields(hash, "cflags", request.extra_cflags);
  Fields(hash, "ldflags", request.extra_ldflags);
  Fields(hash, "include_paths", request.extra_include_paths);
  Fields(hash, "source_dirs", request.source_dirs);
  Field(hash, "opt", std::to_string(request.optimization_level));
  Fields(hash, "cuda_archs", request.cuda.archs);
  Fields(hash, "cuda_cflags", request.cuda.extra_cflags);
  Field(hash, "fast_math", request.cuda.use_fast_math ? "1" : "0");
  Field(hash, "cuda_graph", request.cuda.allow_cuda_graph ? "1" : "0");
  Field(hash, "sharding", std::to_string(request.sharding.size()));
  for (const auto& [function, rule] : request.sharding) {
    hash.UpdateField(function);
    hash.UpdateField(rule);
  }
  Field(hash, "jaxcc_include", env.jaxcc_include_dir);
  Field(hash, "ffi_include", env.ffi_include_dir);
  Fields(hash, "nvcc_dirs", env.nvcc_search_dirs);
  Fields(hash, "detected_archs", env.detected_cuda_archs);
  for (const char* name :
       {"CXX", "PATH", "JAXCC_NVCC", "CUDA_HOME", "CUDA_PATH", "JAXCC_CUDA_ARCH"}) {
    Field(hash, name, Env(name));
  }
  return hash.FinishHex();
}

std::string WarmIndexPath(const std::string& cache_dir, const std::string& fingerprint) {
  return JoinPath(JoinPath(cache_dir, ".index"), fingerprint);
}

std::string StampOf(const std::string& path) {
  FileInfo info = StatPath(path);
  if (!info.exists) return "";
  // A directory's size says nothing portable; its mtime and inode change when entries do.
  return std::to_string(info.is_dir ? 0 : info.size) + "|" + std::to_string(info.mtime_ns) + "|" +
         std::to_string(info.inode);
}

namespace {

json SpecsAsJson(const std::vector<argspec::FunctionSpec>& specs) {
  json out = json::array();
  for (const argspec::FunctionSpec& spec : specs) {
    json params = json::array();
    for (const argspec::Param& p : spec.params) {
      params.push_back({{"kind", argspec::ParamKindName(p.kind)},
                        {"name", p.name},
                        {"type", p.attr_type ? argspec::AttrTypeName(*p.attr_type) : ""}});
    }
    out.push_back({{"name", spec.name},
                   {"namespaces", spec.namespaces},
                   {"source_index", spec.source_index},
                   {"sharding_rule", spec.sharding_rule},
                   {"params", std::move(params)}});
  }
  return out;
}

Result<std::vector<argspec::FunctionSpec>> SpecsFromParsedJson(const json& parsed) {
  if (!parsed.is_array()) return Corrupt("specs are not a list");
  std::vector<argspec::FunctionSpec> specs;
  for (const json& item : parsed) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string() ||
        !item.contains("source_index") || !item["source_index"].is_number_integer() ||
        !item.contains("params") || !item["params"].is_array() || !item.contains("sharding_rule") ||
        !item["sharding_rule"].is_string()) {
      return Corrupt("a spec lacks a field");
    }
    argspec::FunctionSpec spec;
    spec.name = item["name"].get<std::string>();
    spec.namespaces = StringList(item.value("namespaces", json::array()));
    spec.source_index = item["source_index"].get<int>();
    spec.sharding_rule = item["sharding_rule"].get<std::string>();
    for (const json& p : item["params"]) {
      if (!p.is_object() || !p.contains("kind") || !p["kind"].is_string() || !p.contains("name") ||
          !p["name"].is_string() || !p.contains("type") || !p["type"].is_string()) {
        return Corrupt("a parameter lacks a field");
      }
      auto kind = argspec::ParamKindFromName(p["kind"].get<std::string>());
      if (!kind) return Corrupt("unknown parameter kind");
      argspec::Param param;
      param.kind = *kind;
      param.name = p["name"].get<std::string>();
      std::string type = p["type"].get<std::string>();
      if (!type.empty()) {
        param.attr_type = argspec::AttrTypeFromName(type);
        if (!param.attr_type) return Corrupt("unknown attribute type " + type);
      }
      spec.params.push_back(std::move(param));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

std::string SpecsToJson(const std::vector<argspec::FunctionSpec>& specs) {
  return SpecsAsJson(specs).dump();
}

Result<std::vector<argspec::FunctionSpec>> SpecsFromJson(const std::string& text) {
  return SpecsFromParsedJson(json::parse(text, nullptr, /*allow_exceptions=*/false));
}

std::optional<WarmRecord> ReadValidWarmRecord(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || parsed.value("format", "") != kFormat) return std::nullopt;
  const json& key = parsed.value("key", json());
  const json& watched = parsed.value("watched", json());
  if (!key.is_string() || !watched.is_array()) return std::nullopt;
  WarmRecord record;
  record.key = key.get<std::string>();
  for (const json& item : watched) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_string() || !item[1].is_string()) {
      return std::nullopt;
    }
    record.watched_paths.push_back(item[0].get<std::string>());
    record.watched_stamps.push_back(item[1].get<std::string>());
  }
  // The cheap part first: one stat per watched path says whether the record still holds.
  for (size_t i = 0; i < record.watched_paths.size(); ++i) {
    if (StampOf(record.watched_paths[i]) != record.watched_stamps[i]) return std::nullopt;
  }
  auto parsed_specs = SpecsFromParsedJson(parsed.value("specs", json()));
  if (!parsed_specs.ok()) return std::nullopt;
  record.specs = std::move(*parsed_specs);
  record.cuda_archs = StringList(parsed.value("cuda_archs", json::array()));
  record.cuda_archs_source = parsed.value("cuda_archs_source", "");
  return record;
}

Status WriteWarmRecord(const std::string& path, const WarmRecord& record) {
  json watched = json::array();
  for (size_t i = 0; i < record.watched_paths.size(); ++i) {
    watched.push_back({record.watched_paths[i], record.watched_stamps[i]});
  }
  json out = {{"format", kFormat},
              {"key", record.key},
              {"specs", SpecsAsJson(record.specs)},
              {"watched", std::move(watched)},
              {"cuda_archs", record.cuda_archs},
              {"cuda_archs_source", record.cuda_archs_source}};
  JAXCC_RETURN_IF_ERROR(MakeDirs(DirName(path), 0700));
  return WriteFileAtomic(path, out.dump(), 0600);
}

}  // namespace jaxcc::pipeline
