// Manifest <-> JSON. Parsing never throws: nlohmann runs with exceptions disabled for parse and
// every field is type-checked before it is read.
#include "cache/manifest.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace jaxcc::cache {
namespace {

using nlohmann::json;

Error Invalid(const std::string& what) {
  return MakeError(ErrorKind::kCache, "invalid cache manifest: " + what);
}

// Looks up `name` in `object` and checks its type with `is_type`; names the field on failure.
template <class Predicate>
Result<const json*> Field(const json& object, const char* name, Predicate is_type,
                          const char* type_name) {
  auto it = object.find(name);
  if (it == object.end()) return Invalid(std::string("field '") + name + "' is missing");
  if (!is_type(*it)) {
    return Invalid(std::string("field '") + name + "' must be " + type_name);
  }
  return &*it;
}

bool IsString(const json& v) { return v.is_string(); }
bool IsInteger(const json& v) { return v.is_number_integer(); }
bool IsNumber(const json& v) { return v.is_number(); }
bool IsArray(const json& v) { return v.is_array(); }

#define JAXCC_ASSIGN_FIELD(target, object, name, predicate, type_name, getter) \
  do {                                                                         \
    auto field_ = Field(object, name, predicate, type_name);                   \
    if (!field_.ok()) return field_.error();                                   \
    target = (*field_)->getter;                                                \
  } while (false)

Result<Dependency> DependencyFromJson(const json& object, size_t index) {
  if (!object.is_object()) {
    return Invalid("dependencies[" + std::to_string(index) + "] must be an object");
  }
  Dependency dep;
  JAXCC_ASSIGN_FIELD(dep.path, object, "path", IsString, "a string", get<std::string>());
  JAXCC_ASSIGN_FIELD(dep.size, object, "size", IsInteger, "an integer", get<std::int64_t>());
  JAXCC_ASSIGN_FIELD(dep.mtime_ns, object, "mtime_ns", IsInteger, "an integer",
                     get<std::int64_t>());
  JAXCC_ASSIGN_FIELD(dep.sha256, object, "sha256", IsString, "a string", get<std::string>());
  // Manifests written before ctime and inode were kept lack them: no stamp, so always hashed.
  if (object.contains("ctime_ns")) {
    JAXCC_ASSIGN_FIELD(dep.ctime_ns, object, "ctime_ns", IsInteger, "an integer",
                       get<std::int64_t>());
    JAXCC_ASSIGN_FIELD(dep.inode, object, "inode", IsInteger, "an integer", get<std::uint64_t>());
  }
  return dep;
}

Result<WatchedDirectory> DirectoryFromJson(const json& object, size_t index) {
  if (!object.is_object()) {
    return Invalid("directories[" + std::to_string(index) + "] must be an object");
  }
  WatchedDirectory dir;
  JAXCC_ASSIGN_FIELD(dir.path, object, "path", IsString, "a string", get<std::string>());
  JAXCC_ASSIGN_FIELD(dir.mtime_ns, object, "mtime_ns", IsInteger, "an integer",
                     get<std::int64_t>());
  JAXCC_ASSIGN_FIELD(dir.ctime_ns, object, "ctime_ns", IsInteger, "an integer",
                     get<std::int64_t>());
  JAXCC_ASSIGN_FIELD(dir.inode, object, "inode", IsInteger, "an integer", get<std::uint64_t>());
  JAXCC_ASSIGN_FIELD(dir.names_sha256, object, "names", IsString, "a string", get<std::string>());
  JAXCC_ASSIGN_FIELD(dir.files_sha256, object, "files_sha256", IsString, "a string",
                     get<std::string>());
  auto files = Field(object, "files", IsArray, "an array of strings");
  if (!files.ok()) return files.error();
  for (const json& file : **files) {
    if (!file.is_string()) return Invalid("directories[].files must be an array of strings");
    dir.files.push_back(file.get<std::string>());
  }
  return dir;
}

Result<Manifest> FromObject(const json& object) {
  if (!object.is_object()) return Invalid("the top level must be a JSON object");
  Manifest m;
  JAXCC_ASSIGN_FIELD(m.schema, object, "schema", IsInteger, "an integer", get<int>());
  if (m.schema != 1) return Invalid("unsupported schema " + std::to_string(m.schema));
  JAXCC_ASSIGN_FIELD(m.key, object, "key", IsString, "a string", get<std::string>());
  JAXCC_ASSIGN_FIELD(m.module_name, object, "module_name", IsString, "a string",
                     get<std::string>());
  JAXCC_ASSIGN_FIELD(m.library_file, object, "library_file", IsString, "a string",
                     get<std::string>());
  JAXCC_ASSIGN_FIELD(m.library_sha256, object, "library_sha256", IsString, "a string",
                     get<std::string>());
  JAXCC_ASSIGN_FIELD(m.jaxcc_version, object, "jaxcc_version", IsString, "a string",
                     get<std::string>());
  JAXCC_ASSIGN_FIELD(m.build_seconds, object, "build_seconds", IsNumber, "a number", get<double>());
  JAXCC_ASSIGN_FIELD(m.created_unix, object, "created_unix", IsInteger, "an integer",
                     get<std::int64_t>());

  auto names = Field(object, "function_names", IsArray, "an array of strings");
  if (!names.ok()) return names.error();
  for (const json& name : **names) {
    if (!name.is_string()) return Invalid("field 'function_names' must be an array of strings");
    m.function_names.push_back(name.get<std::string>());
  }
  auto deps = Field(object, "dependencies", IsArray, "an array of objects");
  if (!deps.ok()) return deps.error();
  for (size_t i = 0; i < (*deps)->size(); ++i) {
    auto dep = DependencyFromJson((**deps)[i], i);
    if (!dep.ok()) return dep.error();
    m.dependencies.push_back(std::move(*dep));
  }

  // Optional lists (older manifests have neither): paths that must stay absent, object keys.
  for (auto [field, target] :
       {std::pair<const char*, std::vector<std::string>*>{"shadows", &m.shadows},
        {"objects", &m.objects}}) {
    if (!object.contains(field)) continue;
    auto list = Field(object, field, IsArray, "an array of strings");
    if (!list.ok()) return list.error();
    for (const json& item : **list) {
      if (!item.is_string())
        return Invalid(std::string("field '") + field + "' must be an array of strings");
      target->push_back(item.get<std::string>());
    }
  }

  if (object.contains("directories")) {
    auto dirs = Field(object, "directories", IsArray, "an array of objects");
    if (!dirs.ok()) return dirs.error();
    for (size_t i = 0; i < (*dirs)->size(); ++i) {
      auto dir = DirectoryFromJson((**dirs)[i], i);
      if (!dir.ok()) return dir.error();
      m.directories.push_back(std::move(*dir));
    }
  }

  // "inputs" is embedded as a JSON value for readability; it reads back as compact text.
  auto inputs = object.find("inputs");
  if (inputs == object.end()) return Invalid("field 'inputs' is missing");
  if (inputs->is_string()) {
    m.inputs_json = inputs->get<std::string>();
  } else if (!inputs->is_null()) {
    m.inputs_json = inputs->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return m;
}

#undef JAXCC_ASSIGN_FIELD

}  // namespace

std::string ManifestToJson(const Manifest& manifest) {
  json deps = json::array();
  for (const Dependency& dep : manifest.dependencies) {
    deps.push_back({{"path", dep.path},
                    {"size", dep.size},
                    {"mtime_ns", dep.mtime_ns},
                    {"ctime_ns", dep.ctime_ns},
                    {"inode", dep.inode},
                    {"sha256", dep.sha256}});
  }
  json dirs = json::array();
  for (const WatchedDirectory& dir : manifest.directories) {
    dirs.push_back({{"path", dir.path},
                    {"mtime_ns", dir.mtime_ns},
                    {"ctime_ns", dir.ctime_ns},
                    {"inode", dir.inode},
                    {"names", dir.names_sha256},
                    {"files", dir.files},
                    {"files_sha256", dir.files_sha256}});
  }
  // Valid inputs_json is embedded as an object so `cat manifest.json` is readable; anything else
  // is kept verbatim as a string.
  json inputs = nullptr;
  if (!manifest.inputs_json.empty()) {
    inputs = json::parse(manifest.inputs_json, nullptr, /*allow_exceptions=*/false);
    if (!inputs.is_object()) inputs = manifest.inputs_json;
  }
  json object = {
      {"schema", manifest.schema},
      {"key", manifest.key},
      {"module_name", manifest.module_name},
      {"library_file", manifest.library_file},
      {"library_sha256", manifest.library_sha256},
      {"jaxcc_version", manifest.jaxcc_version},
      {"function_names", manifest.function_names},
      {"dependencies", std::move(deps)},
      {"shadows", manifest.shadows},
      {"directories", std::move(dirs)},
      {"objects", manifest.objects},
      {"inputs", std::move(inputs)},
      {"build_seconds", manifest.build_seconds},
      {"created_unix", manifest.created_unix},
  };
  // Paths need not be UTF-8; replace bad bytes instead of letting dump() throw.
  return object.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Manifest> ManifestFromJson(const std::string& text) {
  json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return Invalid("not valid JSON");
  try {
    return FromObject(object);
  } catch (const std::exception& e) {
    // Type checks precede every get<>(), so this is only a last line of defence.
    return Invalid(e.what());
  }
}

}  // namespace jaxcc::cache
