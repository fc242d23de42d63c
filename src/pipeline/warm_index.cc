#include "pipeline/warm_index.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "pipeline/build_world.h"
#include "pipeline/tool_environment.h"
#include "toolchain/native_target.h"
#include "util/fields.h"
#include "util/fs.h"
#include "util/load_trace.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {
namespace {

// A record's first field: a record of another layout is a miss, never misread. (5: each tensor
// parameter's declared dtype, decision 158; 6: watched directories and ctime stamps, the tools'
// environment and a native target's CPU in the fingerprint, decisions 170-173; 7: integers as
// eight bytes, decision 265.)
constexpr std::string_view kFormat = "jaxcc-warm-index-7";

void Field(Sha256Builder& hash, std::string_view name, std::string_view value) {
  hash.UpdateField(name);
  hash.UpdateField(value);
}

void Fields(Sha256Builder& hash, std::string_view name, const std::vector<std::string>& values) {
  Field(hash, name, std::to_string(values.size()));
  for (const std::string& value : values) hash.UpdateField(value);
}

// An unset variable's stand-in: unset and empty differ for the tool searches.
constexpr const char* kUnset = "\x01unset";

}  // namespace

std::string WarmFingerprint(const LoadRequest& request, const BuildEnvironment& env) {
  Sha256Builder hash;
  Field(hash, "format", kFormat);
  Field(hash, "jaxcc", JAXCC_VERSION);
  Field(hash, "name", request.name);
  Field(hash, "platform", request.platform);
  Field(hash, "sources", std::to_string(request.sources.size()));
  for (size_t i = 0; i < request.sources.size(); ++i) {
    const signature::SourceFile& source = request.sources[i];
    hash.UpdateField(source.label);
    if (IsDeferredSource(request.source_stamps, i)) {
      // A deferred file (decision 139): its settled stamp stands for its bytes.
      const cache::LibraryStamp& stamp = request.source_stamps[i];
      Field(hash, "stamp",
            std::to_string(stamp.size) + ":" + std::to_string(stamp.mtime_ns) + ":" +
                std::to_string(stamp.ctime_ns) + ":" + std::to_string(stamp.inode));
    } else {
      Field(hash, "text", source.text);
    }
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
  if (request.debug) Field(hash, "debug", "1");  // absent otherwise: other records unchanged
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
  Field(hash, "shared_cudart", env.shared_cuda_runtime ? "1" : "0");
  Fields(hash, "cudart_dirs", env.cuda_runtime_dirs);
  Fields(hash, "detected_archs", env.detected_cuda_archs);
  for (const char* name :
       {"CXX", "PATH", "JAXCC_NVCC", "CUDA_HOME", "CUDA_PATH", "JAXCC_CUDA_ARCH"}) {
    const char* value = std::getenv(name);
    Field(hash, name, value ? value : kUnset);
  }
  // What the tools read from the environment is in the key (decision 170); a record found by a
  // request alone must not outlive a switch of CPATH, LIBRARY_PATH, NVCC_APPEND_FLAGS, ...
  Fields(hash, "tool_environment", ToolEnvironment(request.platform));
  // `-march=native` names another target on another CPU model (decision 173): the record of a
  // cache shared by hosts holds for this CPU only. /proc/cpuinfo is read once per process.
  if (AsksForNativeTarget(request)) Field(hash, "cpu", toolchain::HostCpuSignature());
  return hash.FinishHex();
}

std::string WarmIndexPath(const std::string& cache_dir, const std::string& fingerprint) {
  return JoinPath(JoinPath(cache_dir, ".index"), fingerprint);
}

FileStamp StampOf(const std::string& path) {
  FileInfo info = StatPath(path);
  if (!info.exists) return {};
  return {true, info.is_dir ? 0 : info.size, info.mtime_ns, info.inode, info.ctime_ns};
}

std::string EncodeWarmRecord(const WarmRecord& record) {
  std::string out;
  AppendField(out, kFormat);
  AppendField(out, record.key);
  AppendField(out, record.entry.library_file);
  AppendField(out, record.entry.library_sha256);
  const cache::LibraryStamp& stamp = record.entry.library_stamp;
  AppendIntField(out, stamp.known ? 1 : 0);
  AppendIntField(out, stamp.size);
  AppendIntField(out, stamp.mtime_ns);
  AppendIntField(out, stamp.ctime_ns);
  AppendIntField(out, static_cast<std::int64_t>(stamp.inode));
  AppendIntField(out, static_cast<std::int64_t>(record.entry.dependencies.size()));
  for (const cache::Dependency& dep : record.entry.dependencies) {
    AppendField(out, dep.path);
    AppendIntField(out, dep.size);
    AppendIntField(out, dep.mtime_ns);
    AppendIntField(out, dep.ctime_ns);
    AppendIntField(out, static_cast<std::int64_t>(dep.inode));
    AppendField(out, dep.sha256);
  }
  AppendIntField(out, static_cast<std::int64_t>(record.entry.shadows.size()));
  for (const std::string& shadow : record.entry.shadows) AppendField(out, shadow);
  AppendIntField(out, static_cast<std::int64_t>(record.entry.directories.size()));
  for (const cache::WatchedDirectory& dir : record.entry.directories) {
    AppendField(out, dir.path);
    AppendIntField(out, dir.mtime_ns);
    AppendIntField(out, dir.ctime_ns);
    AppendIntField(out, static_cast<std::int64_t>(dir.inode));
    AppendField(out, dir.names_sha256);
    AppendField(out, dir.files_sha256);  // not the names: a moved stamp sends the load down the
                                         // full path, whose manifest has them
  }
  AppendIntField(out, static_cast<std::int64_t>(record.watched.size()));
  for (const WatchedPath& watched : record.watched) {
    AppendField(out, watched.path);
    AppendIntField(out, watched.stamp.exists ? 1 : 0);
    AppendIntField(out, watched.stamp.size);
    AppendIntField(out, watched.stamp.mtime_ns);
    AppendIntField(out, static_cast<std::int64_t>(watched.stamp.inode));
    AppendIntField(out, watched.stamp.ctime_ns);
  }
  AppendIntField(out, static_cast<std::int64_t>(record.cuda_archs.size()));
  for (const std::string& arch : record.cuda_archs) AppendField(out, arch);
  AppendField(out, record.cuda_archs_source);
  AppendIntField(out, static_cast<std::int64_t>(record.specs.size()));
  for (const argspec::FunctionSpec& spec : record.specs) {
    AppendField(out, spec.name);
    AppendIntField(out, spec.source_index);
    AppendField(out, spec.sharding_rule);
    AppendIntField(out, static_cast<std::int64_t>(spec.namespaces.size()));
    for (const std::string& ns : spec.namespaces) AppendField(out, ns);
    AppendIntField(out, static_cast<std::int64_t>(spec.params.size()));
    for (const argspec::Param& p : spec.params) {
      AppendField(out, argspec::ParamKindName(p.kind));
      AppendField(out, p.name);
      AppendField(out, p.attr_type ? argspec::AttrTypeName(*p.attr_type) : "");
      AppendField(out, p.dtype ? argspec::ElementTypeName(*p.dtype) : "");
    }
  }
  return out;
}

namespace {

// A count read from a record; a negative one is corruption. Large ones are harmless: the fields
// run out first.
std::optional<std::int64_t> NextCount(FieldReader& reader) {
  auto count = reader.NextInt();
  if (!count || *count < 0) return std::nullopt;
  return count;
}

std::optional<argspec::FunctionSpec> DecodeSpec(FieldReader& reader) {
  argspec::FunctionSpec spec;
  auto name = reader.NextString();
  auto source_index = reader.NextInt();
  auto rule = reader.NextString();
  auto namespaces = NextCount(reader);
  if (!name || !source_index || !rule || !namespaces || *source_index < 0 ||
      *source_index > INT32_MAX) {
    return std::nullopt;
  }
  spec.name = std::move(*name);
  spec.source_index = static_cast<int>(*source_index);
  spec.sharding_rule = std::move(*rule);
  for (std::int64_t i = 0; i < *namespaces; ++i) {
    auto ns = reader.NextString();
    if (!ns) return std::nullopt;
    spec.namespaces.push_back(std::move(*ns));
  }
  auto params = NextCount(reader);
  if (!params) return std::nullopt;
  for (std::int64_t i = 0; i < *params; ++i) {
    auto kind_name = reader.Next();
    auto param_name = reader.NextString();
    auto type_name = reader.Next();
    auto dtype_name = reader.Next();
    if (!kind_name || !param_name || !type_name || !dtype_name) return std::nullopt;
    auto kind = argspec::ParamKindFromName(std::string(*kind_name));
    if (!kind) return std::nullopt;
    argspec::Param param;
    param.kind = *kind;
    param.name = std::move(*param_name);
    if (!type_name->empty()) {
      param.attr_type = argspec::AttrTypeFromName(std::string(*type_name));
      if (!param.attr_type) return std::nullopt;
    }
    if (!dtype_name->empty()) {
      param.dtype = argspec::ElementTypeFromName(*dtype_name);
      if (!param.dtype) return std::nullopt;
    }
    spec.params.push_back(std::move(param));
  }
  return spec;
}

}  // namespace

std::optional<WarmRecord> DecodeWarmRecord(std::string_view text) {
  FieldReader reader(text);
  if (reader.Next() != std::optional<std::string_view>(kFormat)) return std::nullopt;
  WarmRecord record;
  auto key = reader.NextString();
  auto library_file = reader.NextString();
  auto library_sha256 = reader.NextString();
  auto stamp_known = reader.NextInt();
  auto stamp_size = reader.NextInt();
  auto stamp_mtime_ns = reader.NextInt();
  auto stamp_ctime_ns = reader.NextInt();
  auto stamp_inode = reader.NextInt();
  auto dependencies = NextCount(reader);
  if (!key || !library_file || !library_sha256 || !stamp_known || !stamp_size || !stamp_mtime_ns ||
      !stamp_ctime_ns || !stamp_inode || !dependencies) {
    return std::nullopt;
  }
  record.key = std::move(*key);
  record.entry.library_file = std::move(*library_file);
  record.entry.library_sha256 = std::move(*library_sha256);
  record.entry.library_stamp = {*stamp_known != 0, *stamp_size, *stamp_mtime_ns, *stamp_ctime_ns,
                                static_cast<std::uint64_t>(*stamp_inode)};
  for (std::int64_t i = 0; i < *dependencies; ++i) {
    auto path = reader.NextString();
    auto size = reader.NextInt();
    auto mtime_ns = reader.NextInt();
    auto ctime_ns = reader.NextInt();
    auto inode = reader.NextInt();
    auto sha256 = reader.NextString();
    if (!path || !size || !mtime_ns || !ctime_ns || !inode || !sha256) return std::nullopt;
    record.entry.dependencies.push_back({std::move(*path), *size, *mtime_ns, std::move(*sha256),
                                         *ctime_ns, static_cast<std::uint64_t>(*inode)});
  }
  auto shadows = NextCount(reader);
  if (!shadows) return std::nullopt;
  for (std::int64_t i = 0; i < *shadows; ++i) {
    auto shadow = reader.NextString();
    if (!shadow) return std::nullopt;
    record.entry.shadows.push_back(std::move(*shadow));
  }
  auto directories = NextCount(reader);
  if (!directories) return std::nullopt;
  for (std::int64_t i = 0; i < *directories; ++i) {
    auto path = reader.NextString();
    auto mtime_ns = reader.NextInt();
    auto ctime_ns = reader.NextInt();
    auto inode = reader.NextInt();
    auto names = reader.NextString();
    auto files_sha256 = reader.NextString();
    if (!path || !mtime_ns || !ctime_ns || !inode || !names || !files_sha256) return std::nullopt;
    cache::WatchedDirectory dir;
    dir.path = std::move(*path);
    dir.mtime_ns = *mtime_ns;
    dir.ctime_ns = *ctime_ns;
    dir.inode = static_cast<std::uint64_t>(*inode);
    dir.names_sha256 = std::move(*names);
    dir.files_sha256 = std::move(*files_sha256);
    record.entry.directories.push_back(std::move(dir));
  }
  auto watched = NextCount(reader);
  if (!watched) return std::nullopt;
  for (std::int64_t i = 0; i < *watched; ++i) {
    auto path = reader.NextString();
    auto exists = reader.NextInt();
    auto size = reader.NextInt();
    auto mtime_ns = reader.NextInt();
    auto inode = reader.NextInt();
    auto ctime_ns = reader.NextInt();
    if (!path || !exists || !size || !mtime_ns || !inode || !ctime_ns) return std::nullopt;
    record.watched.push_back(
        {std::move(*path),
         {*exists != 0, *size, *mtime_ns, static_cast<std::uint64_t>(*inode), *ctime_ns}});
  }
  auto archs = NextCount(reader);
  if (!archs) return std::nullopt;
  for (std::int64_t i = 0; i < *archs; ++i) {
    auto arch = reader.NextString();
    if (!arch) return std::nullopt;
    record.cuda_archs.push_back(std::move(*arch));
  }
  auto archs_source = reader.NextString();
  auto specs = NextCount(reader);
  if (!archs_source || !specs) return std::nullopt;
  record.cuda_archs_source = std::move(*archs_source);
  for (std::int64_t i = 0; i < *specs; ++i) {
    auto spec = DecodeSpec(reader);
    if (!spec) return std::nullopt;
    record.specs.push_back(std::move(*spec));
  }
  if (!reader.Done()) return std::nullopt;  // trailing bytes: not a record this code wrote
  return record;
}

std::optional<WarmRecord> ReadValidWarmRecord(const std::string& path) {
  auto text = ReadFile(path);
  // Finer than the caller's "warm index" stage: on the H200 one corpus module spent 13 ms here
  // where the others spent 0.2 (eighteenth session), and these say in which part.
  trace::Mark("warm index: read record");
  if (!text.ok()) return std::nullopt;
  auto record = DecodeWarmRecord(*text);
  trace::Mark("warm index: decode");
  if (!record) return std::nullopt;
  for (const WatchedPath& watched : record->watched) {
    if (StampOf(watched.path) != watched.stamp) return std::nullopt;
  }
  return record;
}

Status WriteWarmRecord(const std::string& path, const WarmRecord& record) {
  JAXCC_RETURN_IF_ERROR(MakeDirs(DirName(path), 0700));
  return WriteFileAtomic(path, EncodeWarmRecord(record), 0600);
}

namespace {

bool IsRecordName(const std::string& name) {
  if (name.size() != 64) return false;
  for (char c : name) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

int TrimWarmIndex(const std::string& index_dir, size_t max_records) {
  constexpr std::int64_t kHourNs = 3600LL * 1000 * 1000 * 1000;
  // WriteFileAtomic's "<record>.tmp-<tag>" of a writer that died.
  int removed = RemoveStaleTemporaries(index_dir, kHourNs, [](const std::string& name) {
    return name.find(".tmp-") != std::string::npos;
  });
  std::vector<std::string> records;
  for (const std::string& name : ListDir(index_dir)) {
    if (IsRecordName(name)) records.push_back(name);
  }
  if (records.size() <= max_records) return removed;
  std::vector<std::pair<std::int64_t, std::string>> by_age;
  by_age.reserve(records.size());
  for (const std::string& name : records) {
    by_age.emplace_back(StatPath(JoinPath(index_dir, name)).mtime_ns, name);
  }
  std::sort(by_age.begin(), by_age.end());
  const size_t keep = max_records * 3 / 4;
  for (size_t i = 0; i + keep < by_age.size(); ++i) {
    if (::unlink(JoinPath(index_dir, by_age[i].second).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace jaxcc::pipeline
