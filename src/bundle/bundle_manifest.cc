// BundleManifest <-> JSON. Parsing never throws: every field is type-checked before it is read,
// and a manifest from a newer format is refused before any other field is looked at.
#include "bundle/bundle_manifest.h"

#include <nlohmann/json.hpp>

#include "argspec/sharding_rule.h"

namespace jaxcc::bundle {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;
using nlohmann::json;

json SpecToJson(const FunctionSpec& spec) {
  json params = json::array();
  for (const Param& p : spec.params) {
    json attr_type = nullptr;
    if (p.attr_type) attr_type = argspec::AttrTypeName(*p.attr_type);
    json param = {
        {"kind", argspec::ParamKindName(p.kind)}, {"name", p.name}, {"attr_type", attr_type}};
    // Only where declared (decision 158): an untyped spec's manifest reads as it did before.
    if (p.dtype) param["dtype"] = argspec::ElementTypeName(*p.dtype);
    params.push_back(std::move(param));
  }
  return {{"name", spec.name},
          {"namespaces", spec.namespaces},
          {"source_index", spec.source_index},
          {"params", std::move(params)},
          {"sharding_rule", spec.sharding_rule}};
}

class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  Error Invalid(const std::string& what) const {
    return MakeError(ErrorKind::kBundle,
                     "invalid bundle manifest " + where_ + ": " + what +
                         ". Rebuild the bundle with `jaxcc build`; a manifest is never edited "
                         "by hand.");
  }

  Result<std::string> String(const json& object, const char* name) const {
    auto it = object.find(name);
    if (it == object.end() || !it->is_string()) {
      return Invalid(std::string("field '") + name + "' is missing or not a string");
    }
    return it->get<std::string>();
  }

  Result<std::int64_t> Integer(const json& object, const char* name) const {
    auto it = object.find(name);
    if (it == object.end() || !it->is_number_integer()) {
      return Invalid(std::string("field '") + name + "' is missing or not an integer");
    }
    return it->get<std::int64_t>();
  }

  Result<std::vector<std::string>> Strings(const json& object, const char* name) const {
    auto it = object.find(name);
    if (it == object.end() || !it->is_array()) {
      return Invalid(std::string("field '") + name + "' is missing or not an array");
    }
    std::vector<std::string> out;
    for (const json& item : *it) {
      if (!item.is_string()) return Invalid(std::string("field '") + name + "' holds a non-string");
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  Result<const json*> Array(const json& object, const char* name) const {
    auto it = object.find(name);
    if (it == object.end() || !it->is_array()) {
      return Invalid(std::string("field '") + name + "' is missing or not an array");
    }
    return &*it;
  }

 private:
  std::string where_;
};

#define JAXCC_READ(target, expr)           \
  do {                                     \
    auto read_ = (expr);                   \
    if (!read_.ok()) return read_.error(); \
    target = std::move(*read_);            \
  } while (false)

Result<FunctionSpec> SpecFromJson(const Reader& r, const json& object) {
  if (!object.is_object()) return r.Invalid("a function is not an object");
  FunctionSpec spec;
  JAXCC_READ(spec.name, r.String(object, "name"));
  JAXCC_READ(spec.namespaces, r.Strings(object, "namespaces"));
  std::int64_t index = 0;
  JAXCC_READ(index, r.Integer(object, "source_index"));
  spec.source_index = static_cast<int>(index);
  const json* params = nullptr;
  JAXCC_READ(params, r.Array(object, "params"));
  for (const json& p : *params) {
    if (!p.is_object()) return r.Invalid("a parameter of '" + spec.name + "' is not an object");
    Param param;
    std::string kind;
    JAXCC_READ(kind, r.String(p, "kind"));
    auto known = argspec::ParamKindFromName(kind);
    if (!known) {
      return r.Invalid("parameter kind '" + kind + "' of '" + spec.name + "' is unknown");
    }
    param.kind = *known;
    JAXCC_READ(param.name, r.String(p, "name"));
    auto type = p.find("attr_type");
    if (type != p.end() && type->is_string()) {
      param.attr_type = argspec::AttrTypeFromName(type->get<std::string>());
      if (!param.attr_type) return r.Invalid("unknown attr_type in '" + spec.name + "'");
    } else if (param.kind == ParamKind::kAttr) {
      return r.Invalid("attribute '" + param.name + "' of '" + spec.name + "' has no type");
    }
    // The declared dtype of a tensor (decision 158); bundles written before it have none: any.
    auto dtype = p.find("dtype");
    if (dtype != p.end() && !dtype->is_null()) {
      if (dtype->is_string()) param.dtype = argspec::ElementTypeFromName(dtype->get<std::string>());
      if (!param.dtype) {
        return r.Invalid("parameter '" + param.name + "' of '" + spec.name +
                         "' has an unknown dtype (known: " + argspec::ElementTypeNameList() + ")");
      }
    }
    spec.params.push_back(std::move(param));
  }
  // The function's sharding rule (issue 25: a deployed kernel keeps its partitioning). Bundles
  // written before it was recorded have no field: no rule, as then.
  if (object.contains("sharding_rule")) {
    std::string rule;
    JAXCC_READ(rule, r.String(object, "sharding_rule"));
    if (!rule.empty()) {
      auto parsed = argspec::ParseRuleFor(spec, rule);
      if (!parsed.ok())
        return r.Invalid("sharding rule of '" + spec.name + "': " + parsed.error().message);
      spec.sharding_rule = parsed->text;
    }
  }
  return spec;
}

// A file name in the manifest is joined to the bundle directory: it must stay inside it.
bool SafeFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

Result<BundleManifest> FromObject(const Reader& r, const json& object) {
  if (!object.is_object()) return r.Invalid("the top level must be a JSON object");
  BundleManifest m;
  std::int64_t format = 0;
  JAXCC_READ(format, r.Integer(object, "format"));
  if (format > kBundleFormat || format < 1) {
    return MakeError(ErrorKind::kBundle,
                     "the bundle uses manifest format " + std::to_string(format) +
                         ", and this jaxcc (" JAXCC_VERSION ") reads format " +
                         std::to_string(kBundleFormat) +
                         " at most. Upgrade jaxcc on this machine, or rebuild the bundle with "
                         "this jaxcc's `jaxcc build`.");
  }
  m.format = static_cast<int>(format);
  JAXCC_READ(m.module_name, r.String(object, "module_name"));
  JAXCC_READ(m.key, r.String(object, "key"));
  JAXCC_READ(m.jaxcc_version, r.String(object, "jaxcc_version"));
  JAXCC_READ(m.platform, r.String(object, "platform"));
  JAXCC_READ(m.host, r.String(object, "host"));
  JAXCC_READ(m.cuda_archs, r.Strings(object, "cuda_archs"));
  JAXCC_READ(m.ptx_arch, r.String(object, "ptx_arch"));
  auto ffi = object.find("xla_ffi_api");
  if (ffi == object.end() || !ffi->is_object()) return r.Invalid("field 'xla_ffi_api' is missing");
  std::int64_t major = 0, minor = 0;
  JAXCC_READ(major, r.Integer(*ffi, "major"));
  JAXCC_READ(minor, r.Integer(*ffi, "minor"));
  m.ffi_api = {static_cast<int>(major), static_cast<int>(minor)};
  JAXCC_READ(m.compiler, r.String(object, "compiler"));
  JAXCC_READ(m.nvcc, r.String(object, "nvcc"));
  std::int64_t level = 0;
  JAXCC_READ(level, r.Integer(object, "optimization_level"));
  m.optimization_level = static_cast<int>(level);
  JAXCC_READ(m.target_prefix, r.String(object, "target_prefix"));
  JAXCC_READ(m.vmap_method, r.String(object, "vmap_method"));
  JAXCC_READ(m.created_unix, r.Integer(object, "created_unix"));
  const json* functions = nullptr;
  JAXCC_READ(functions, r.Array(object, "functions"));
  for (const json& item : *functions) {
    FunctionSpec spec;
    JAXCC_READ(spec, SpecFromJson(r, item));
    m.functions.push_back(std::move(spec));
  }
  const json* files = nullptr;
  JAXCC_READ(files, r.Array(object, "files"));
  for (const json& item : *files) {
    if (!item.is_object()) return r.Invalid("a file entry is not an object");
    BundleFile file;
    JAXCC_READ(file.path, r.String(item, "path"));
    JAXCC_READ(file.role, r.String(item, "role"));
    JAXCC_READ(file.size, r.Integer(item, "size"));
    JAXCC_READ(file.sha256, r.String(item, "sha256"));
    if (!SafeFileName(file.path)) {
      return r.Invalid("file name '" + file.path + "' is not a plain name inside the bundle");
    }
    m.files.push_back(std::move(file));
  }
  if (object.contains("cpu_features")) {
    JAXCC_READ(m.cpu_features, r.Strings(object, "cpu_features"));
  }
  if (object.contains("cpu_target")) {
    JAXCC_READ(m.cpu_target, r.String(object, "cpu_target"));
  }
  if (object.contains("needed_libraries")) {
    JAXCC_READ(m.needed_libraries, r.Strings(object, "needed_libraries"));
  }
  if (m.functions.empty()) return r.Invalid("it lists no functions");
  return m;
}

#undef JAXCC_READ

}  // namespace

std::string BundleManifestToJson(const BundleManifest& m) {
  json functions = json::array();
  for (const FunctionSpec& spec : m.functions) functions.push_back(SpecToJson(spec));
  json files = json::array();
  for (const BundleFile& f : m.files) {
    files.push_back({{"path", f.path}, {"role", f.role}, {"size", f.size}, {"sha256", f.sha256}});
  }
  json object = {
      {"format", m.format},
      {"module_name", m.module_name},
      {"key", m.key},
      {"jaxcc_version", m.jaxcc_version},
      {"platform", m.platform},
      {"host", m.host},
      {"cuda_archs", m.cuda_archs},
      {"ptx_arch", m.ptx_arch},
      {"xla_ffi_api", {{"major", m.ffi_api.major}, {"minor", m.ffi_api.minor}}},
      {"compiler", m.compiler},
      {"nvcc", m.nvcc},
      {"optimization_level", m.optimization_level},
      {"target_prefix", m.target_prefix},
      {"vmap_method", m.vmap_method},
      {"functions", std::move(functions)},
      {"files", std::move(files)},
      {"needed_libraries", m.needed_libraries},
      {"cpu_target", m.cpu_target},
      {"cpu_features", m.cpu_features},
      {"created_unix", m.created_unix},
  };
  return object.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<BundleManifest> BundleManifestFromJson(const std::string& text, const std::string& where) {
  Reader reader(where);
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return reader.Invalid("not valid JSON");
  try {
    return FromObject(reader, object);
  } catch (const std::exception& e) {
    return reader.Invalid(e.what());
  }
}

}  // namespace jaxcc::bundle
