#include "cache/manifest.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace jaxcc::cache {
namespace {

Manifest Sample() {
  Manifest m;
  m.key = std::string(64, 'a');
  m.module_name = "my_kernels";
  m.library_file = "my_kernels.0123456789ab.so";
  m.library_sha256 = std::string(64, 'b');
  m.jaxcc_version = "0.1.0";
  m.function_names = {"add", "scale"};
  m.dependencies = {
      {"/src/a.h", 12, 1700000000123456789, std::string(64, 'c'), 1700000000987654321, 4242}};
  m.shadows = {"/vendor/a.h"};
  m.objects = {std::string(64, 'd')};
  m.inputs_json = R"({"platform":"cpu"})";
  m.build_seconds = 1.25;
  m.created_unix = 1700000000;
  return m;
}

TEST(Manifest, RoundTrip) {
  Manifest m = Sample();
  auto back = ManifestFromJson(ManifestToJson(m));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->schema, 1);
  EXPECT_EQ(back->key, m.key);
  EXPECT_EQ(back->module_name, m.module_name);
  EXPECT_EQ(back->library_file, m.library_file);
  EXPECT_EQ(back->library_sha256, m.library_sha256);
  EXPECT_EQ(back->jaxcc_version, m.jaxcc_version);
  EXPECT_EQ(back->function_names, m.function_names);
  ASSERT_EQ(back->dependencies.size(), 1u);
  EXPECT_EQ(back->dependencies[0].path, "/src/a.h");
  EXPECT_EQ(back->dependencies[0].size, 12);
  EXPECT_EQ(back->dependencies[0].mtime_ns, 1700000000123456789);
  EXPECT_EQ(back->dependencies[0].sha256, m.dependencies[0].sha256);
  EXPECT_EQ(back->dependencies[0].ctime_ns, 1700000000987654321);
  EXPECT_EQ(back->dependencies[0].inode, 4242u);
  EXPECT_EQ(back->shadows, m.shadows);
  EXPECT_EQ(back->objects, m.objects);
  EXPECT_EQ(back->inputs_json, m.inputs_json);
  EXPECT_DOUBLE_EQ(back->build_seconds, 1.25);
  EXPECT_EQ(back->created_unix, 1700000000);
}

TEST(Manifest, AManifestWithoutStampsOrListsReadsAsUnstamped) {
  // Written before decision 146: no ctime, inode, shadows or objects.
  auto back = ManifestFromJson(R"({"schema": 1, "key": "k", "module_name": "m",
      "library_file": "m.so", "library_sha256": "s", "jaxcc_version": "v",
      "function_names": [], "inputs": null, "build_seconds": 0, "created_unix": 0,
      "dependencies": [{"path": "/a.h", "size": 1, "mtime_ns": 2, "sha256": "x"}]})");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->dependencies.size(), 1u);
  EXPECT_EQ(back->dependencies[0].ctime_ns, 0);
  EXPECT_TRUE(back->shadows.empty());
  EXPECT_TRUE(back->objects.empty());
  EXPECT_FALSE(ManifestFromJson(R"({"schema": 1, "key": "k", "module_name": "m",
      "library_file": "m.so", "library_sha256": "s", "jaxcc_version": "v",
      "function_names": [], "inputs": null, "build_seconds": 0, "created_unix": 0,
      "dependencies": [], "shadows": [1]})")
                   .ok());
}

TEST(Manifest, InputsAreEmbeddedAsAnObjectForReadability) {
  auto json = nlohmann::json::parse(ManifestToJson(Sample()));
  EXPECT_TRUE(json["inputs"].is_object());
  EXPECT_EQ(json["inputs"]["platform"], "cpu");
}

TEST(Manifest, NonObjectInputsSurviveAsText) {
  for (const std::string& inputs :
       {std::string("not json"), std::string("\"quoted\""), std::string("")}) {
    Manifest m = Sample();
    m.inputs_json = inputs;
    auto back = ManifestFromJson(ManifestToJson(m));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->inputs_json, inputs);
  }
}

TEST(Manifest, BadJsonIsACacheError) {
  auto bad = ManifestFromJson("{\"schema\": 1,");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kCache);
  EXPECT_FALSE(ManifestFromJson("").ok());
  EXPECT_FALSE(ManifestFromJson("[1, 2]").ok());
}

TEST(Manifest, MissingOrIllTypedFieldsAreNamed) {
  auto good = nlohmann::json::parse(ManifestToJson(Sample()));
  struct Case {
    const char* field;
    nlohmann::json value;  // null = remove the field
  };
  for (const Case& c : {Case{"key", nullptr}, Case{"key", 5}, Case{"library_sha256", nullptr},
                        Case{"function_names", "add"}, Case{"function_names", {1, 2}},
                        Case{"dependencies", nullptr}, Case{"build_seconds", "fast"},
                        Case{"created_unix", 1.5}, Case{"inputs", nullptr}}) {
    nlohmann::json json = good;
    if (c.value.is_null()) {
      json.erase(c.field);
    } else {
      json[c.field] = c.value;
    }
    auto back = ManifestFromJson(json.dump());
    ASSERT_FALSE(back.ok()) << c.field;
    EXPECT_EQ(back.error().kind, ErrorKind::kCache);
    EXPECT_NE(back.error().message.find(c.field), std::string::npos) << back.error().message;
  }
}

TEST(Manifest, IllTypedDependencyAndUnknownSchemaAreRejected) {
  auto json = nlohmann::json::parse(ManifestToJson(Sample()));
  json["dependencies"][0]["size"] = "12";
  auto back = ManifestFromJson(json.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("size"), std::string::npos);

  json = nlohmann::json::parse(ManifestToJson(Sample()));
  json["dependencies"] = {"a.h"};
  EXPECT_FALSE(ManifestFromJson(json.dump()).ok());

  json = nlohmann::json::parse(ManifestToJson(Sample()));
  json["schema"] = 2;
  back = ManifestFromJson(json.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("schema"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::cache
