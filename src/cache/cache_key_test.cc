#include "cache/cache_key.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

namespace jaxcc::cache {
namespace {

KeyInputs BaseInputs() {
  KeyInputs in;
  in.jaxcc_version = "0.1.0";
  in.platform = "cpu";
  in.module_name = "my_kernels";
  in.sources = {{"a.cc", "int a;"}, {"b.cc", "int b;"}};
  in.specs = "add@0: args:f32[...] -> f32[...]\n";
  in.compile_flags = {"-O2", "-std=c++17"};
  in.link_flags = {"-shared"};
  in.include_paths = {"/inc"};
  in.compiler_path = "/usr/bin/g++";
  in.compiler_version = "g++ 12.2.0";
  in.header_digest = "abc123";
  return in;
}

TEST(ComputeKey, IsStableLowercaseHex) {
  std::string key = ComputeKey(BaseInputs());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(ComputeKey(BaseInputs()), key);
}

TEST(ComputeKey, EveryFieldChangesTheKey) {
  const std::string base = ComputeKey(BaseInputs());
  std::vector<std::pair<const char*, std::function<void(KeyInputs&)>>> edits = {
      {"jaxcc_version", [](KeyInputs& k) { k.jaxcc_version = "0.1.1"; }},
      {"platform", [](KeyInputs& k) { k.platform = "cuda"; }},
      {"module_name", [](KeyInputs& k) { k.module_name = "other"; }},
      {"source label", [](KeyInputs& k) { k.sources[0].first = "c.cc"; }},
      {"source text", [](KeyInputs& k) { k.sources[1].second = "int b ;"; }},
      {"extra source", [](KeyInputs& k) { k.sources.emplace_back("", ""); }},
      {"specs", [](KeyInputs& k) { k.specs += " "; }},
      {"compile_flags", [](KeyInputs& k) { k.compile_flags.push_back("-g"); }},
      {"link_flags", [](KeyInputs& k) { k.link_flags.clear(); }},
      {"include_paths", [](KeyInputs& k) { k.include_paths[0] = "/inc2"; }},
      {"compiler_path", [](KeyInputs& k) { k.compiler_path = "/opt/bin/g++"; }},
      {"compiler_version", [](KeyInputs& k) { k.compiler_version = "g++ 12.3.0"; }},
      {"header_digest", [](KeyInputs& k) { k.header_digest = "abc124"; }},
  };
  for (const auto& [what, edit] : edits) {
    KeyInputs inputs = BaseInputs();
    edit(inputs);
    EXPECT_NE(ComputeKey(inputs), base) << what;
  }
}

TEST(ComputeKey, OrderOfSourcesAndFlagsMatters) {
  KeyInputs swapped = BaseInputs();
  std::swap(swapped.sources[0], swapped.sources[1]);
  EXPECT_NE(ComputeKey(swapped), ComputeKey(BaseInputs()));
  KeyInputs flags = BaseInputs();
  std::swap(flags.compile_flags[0], flags.compile_flags[1]);
  EXPECT_NE(ComputeKey(flags), ComputeKey(BaseInputs()));
}

TEST(ComputeKey, FieldBoundariesMatter) {
  KeyInputs a = BaseInputs(), b = BaseInputs();
  a.compile_flags = {"-a", "b"};
  b.compile_flags = {"-ab"};
  EXPECT_NE(ComputeKey(a), ComputeKey(b));

  // The same flag moved from one list to the next.
  a = BaseInputs();
  b = BaseInputs();
  a.compile_flags = {"-x"};
  a.link_flags = {};
  b.compile_flags = {};
  b.link_flags = {"-x"};
  EXPECT_NE(ComputeKey(a), ComputeKey(b));

  // Text shifted between a source's label and its text, or between two scalar fields.
  a = BaseInputs();
  b = BaseInputs();
  a.sources = {{"ab", "c"}};
  b.sources = {{"a", "bc"}};
  EXPECT_NE(ComputeKey(a), ComputeKey(b));
  a = BaseInputs();
  b = BaseInputs();
  a.compiler_path = "/usr/bin/g++ 12";
  a.compiler_version = "";
  b.compiler_path = "/usr/bin/g++";
  b.compiler_version = " 12";
  EXPECT_NE(ComputeKey(a), ComputeKey(b));
}

TEST(DescribeKeyInputs, IsJsonWithSourceDigestsNotText) {
  std::string text = DescribeKeyInputs(BaseInputs());
  auto json = nlohmann::json::parse(text, nullptr, false);
  ASSERT_TRUE(json.is_object()) << text;
  EXPECT_EQ(json["module_name"], "my_kernels");
  ASSERT_EQ(json["sources"].size(), 2u);
  EXPECT_EQ(json["sources"][0]["label"], "a.cc");
  EXPECT_EQ(json["sources"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(text.find("int a;"), std::string::npos);
  EXPECT_EQ(json["compile_flags"], nlohmann::json({"-O2", "-std=c++17"}));
  EXPECT_EQ(json["compiler_path"], "/usr/bin/g++");
}

TEST(DescribeKeyInputs, ToleratesInvalidUtf8) {
  KeyInputs inputs = BaseInputs();
  inputs.include_paths = {std::string("/bad\xff\xfe")};
  std::string text = DescribeKeyInputs(inputs);
  EXPECT_TRUE(nlohmann::json::parse(text, nullptr, false).is_object());
}

}  // namespace
}  // namespace jaxcc::cache
