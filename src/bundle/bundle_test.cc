#include "bundle/bundle.h"

#include <gtest/gtest.h>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::bundle {
namespace {

using argspec::FunctionSpec;
using argspec::Param;
using argspec::ParamKind;

BundleManifest Sample() {
  BundleManifest m;
  m.module_name = "demo";
  m.key = "k123";
  m.jaxcc_version = "0.1.0";
  m.platform = "cpu";
  m.host = HostPlatform();
  m.ffi_api = {0, 3};
  m.compiler = "/usr/bin/g++ (g++ 12)";
  m.target_prefix = "demo";
  FunctionSpec spec;
  spec.name = "scale";
  spec.namespaces = {"ops"};
  spec.params = {{ParamKind::kArg, "x", std::nullopt},
                 {ParamKind::kRet, "y", std::nullopt},
                 {ParamKind::kAttr, "factor", argspec::AttrType::kFloat32}};
  m.functions = {spec};
  m.files = {{"libdemo.so", "library", 3, Sha256Hex("abc")}};
  return m;
}

Runtime Here() { return Runtime{HostPlatform(), {0, 3}, {}}; }

TEST(BundleManifest, RoundTripsEveryField) {
  BundleManifest m = Sample();
  m.platform = "cuda";
  m.cuda_archs = {"80", "90a"};
  m.ptx_arch = "90";
  auto back = BundleManifestFromJson(BundleManifestToJson(m), "test");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->module_name, "demo");
  EXPECT_EQ(back->cuda_archs, m.cuda_archs);
  EXPECT_EQ(back->ptx_arch, "90");
  EXPECT_EQ(back->ffi_api.minor, 3);
  ASSERT_EQ(back->functions.size(), 1u);
  const FunctionSpec& spec = back->functions[0];
  EXPECT_EQ(spec.namespaces, std::vector<std::string>{"ops"});
  ASSERT_EQ(spec.params.size(), 3u);
  EXPECT_EQ(spec.params[2].kind, ParamKind::kAttr);
  EXPECT_EQ(spec.params[2].name, "factor");
  EXPECT_EQ(spec.params[2].attr_type, argspec::AttrType::kFloat32);
  EXPECT_EQ(back->files[0].sha256, Sha256Hex("abc"));
}

TEST(BundleManifest, NewerFormatIsRefusedNamingBothVersions) {
  std::string text = BundleManifestToJson(Sample());
  text.replace(text.find("\"format\": 1"), 11, "\"format\": 7");
  auto back = BundleManifestFromJson(text, "test");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().kind, ErrorKind::kBundle);
  EXPECT_NE(back.error().message.find("format 7"), std::string::npos);
  EXPECT_NE(back.error().message.find("format 1 at most"), std::string::npos);
  EXPECT_NE(back.error().message.find("Upgrade jaxcc"), std::string::npos);
}

TEST(BundleManifest, FileNamesMustStayInsideTheBundle) {
  BundleManifest m = Sample();
  m.files[0].path = "../evil.so";
  auto back = BundleManifestFromJson(BundleManifestToJson(m), "test");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("not a plain name"), std::string::npos);
}

TEST(BundleManifest, MalformedJsonAndMissingFieldsAreBundleErrors) {
  EXPECT_EQ(BundleManifestFromJson("{", "t").error().kind, ErrorKind::kBundle);
  auto missing = BundleManifestFromJson(R"({"format": 1})", "t");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("module_name"), std::string::npos);
}

TEST(Compat, HostMismatchNamesBothSides) {
  BundleManifest m = Sample();
  m.host = "darwin-arm64";
  auto status = CheckCompatible(m, Here());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("darwin-arm64"), std::string::npos);
  EXPECT_NE(status.error().message.find(HostPlatform()), std::string::npos);
}

TEST(Compat, FfiApiMajorMustMatchAndMinorMayNotBeNewer) {
  BundleManifest m = Sample();
  EXPECT_TRUE(CheckCompatible(m, Here()).ok());
  m.ffi_api = {0, 1};  // older minor: the runtime supports it
  EXPECT_TRUE(CheckCompatible(m, Here()).ok());
  m.ffi_api = {0, 4};
  auto newer = CheckCompatible(m, Here());
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("XLA FFI API 0.4"), std::string::npos);
  EXPECT_NE(newer.error().message.find("XLA FFI API 0.3"), std::string::npos);
  m.ffi_api = {1, 0};
  EXPECT_FALSE(CheckCompatible(m, Here()).ok());
}

TEST(Compat, GpuCoverageFollowsSassAndPtxRules) {
  // SASS 80 runs on 8.6 (same major, newer minor); PTX 90 JITs on 10.0; 7.5 is not covered.
  EXPECT_TRUE(UncoveredGpus({"80", "90"}, "90", {"8.6", "9.0", "10.0"}).empty());
  EXPECT_EQ(UncoveredGpus({"80", "90"}, "90", {"7.5"}), std::vector<std::string>{"75"});
  // SASS 86 does not run on 8.0, and an arch-specific 90a only on 9.0.
  EXPECT_EQ(UncoveredGpus({"86"}, "", {"8.0"}), std::vector<std::string>{"80"});
  EXPECT_TRUE(UncoveredGpus({"90a"}, "", {"9.0"}).empty());
  EXPECT_EQ(UncoveredGpus({"90a"}, "", {"10.0"}), std::vector<std::string>{"100"});
}

TEST(Compat, MissingGpuArchNamesBothSides) {
  BundleManifest m = Sample();
  m.platform = "cuda";
  m.cuda_archs = {"80"};
  m.ptx_arch = "80";
  Runtime runtime = Here();
  runtime.gpu_archs = {"7.0"};
  auto status = CheckCompatible(m, runtime);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("sm_80"), std::string::npos);
  EXPECT_NE(status.error().message.find("sm_70"), std::string::npos);
}

TEST(Compat, ReadsTheFfiApiVersionFromTheHeader) {
  auto dir = MakeTempDir("jaxcc-bundle-test");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(MakeDirs(JoinPath(*dir, "xla/ffi/api")).ok());
  ASSERT_TRUE(WriteFile(JoinPath(*dir, "xla/ffi/api/c_api.h"),
                        "#define XLA_FFI_API_MAJOR 0\n// x\n#define XLA_FFI_API_MINOR 7\n")
                  .ok());
  auto version = ReadFfiApiVersion(*dir);
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(version->major, 0);
  EXPECT_EQ(version->minor, 7);
  EXPECT_EQ(ReadFfiApiVersion("/nonexistent").error().kind, ErrorKind::kToolchain);
  (void)RemoveTree(*dir);
}

TEST(Compat, TheFfiApiVersionScanSkipsLookalikesAndNeedsBothNumbers) {
  auto dir = MakeTempDir("jaxcc-bundle-test");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(MakeDirs(JoinPath(*dir, "xla/ffi/api")).ok());
  const std::string header = JoinPath(*dir, "xla/ffi/api/c_api.h");
  ASSERT_TRUE(WriteFile(header,
                        "#define XLA_FFI_API_MAJOR_EXTRA 9\n#define XLA_FFI_API_MINORS 8\n"
                        "#define\tXLA_FFI_API_MAJOR \t 12\n#define XLA_FFI_API_MINOR  3 // c\n")
                  .ok());
  auto version = ReadFfiApiVersion(*dir);
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(version->major, 12);
  EXPECT_EQ(version->minor, 3);
  ASSERT_TRUE(WriteFile(header, "#define XLA_FFI_API_MAJOR 0\n#define XLA_FFI_API_MINOR\n").ok());
  auto missing = ReadFfiApiVersion(*dir);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("XLA_FFI_API_MINOR"), std::string::npos);
  (void)RemoveTree(*dir);
}

// A bundle directory with `library` as its library's bytes and a manifest describing `listed`.
std::string MakeBundle(const std::string& library, const std::string& listed) {
  auto dir = MakeTempDir("jaxcc-bundle-test");
  BundleManifest m = Sample();
  m.files = {
      {"libdemo.so", "library", static_cast<std::int64_t>(listed.size()), Sha256Hex(listed)}};
  EXPECT_TRUE(WriteFile(JoinPath(*dir, kManifestName), BundleManifestToJson(m)).ok());
  EXPECT_TRUE(WriteFile(JoinPath(*dir, "libdemo.so"), library).ok());
  return *dir;
}

TEST(LoadBundle, RefusesMissingTruncatedAndAlteredFilesBeforeDlopen) {
  std::string truncated = MakeBundle("abc", "abcdef");
  auto result = LoadBundle(truncated, Here());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ErrorKind::kBundle);
  EXPECT_NE(result.error().message.find("(truncated)"), std::string::npos);
  EXPECT_NE(result.error().message.find("Nothing was loaded"), std::string::npos);

  std::string altered = MakeBundle("abd", "abc");
  result = LoadBundle(altered, Here());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("(altered)"), std::string::npos);

  ASSERT_TRUE(RemoveTree(JoinPath(altered, "libdemo.so")).ok());
  result = LoadBundle(altered, Here());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("is missing"), std::string::npos);
  (void)RemoveTree(truncated);
  (void)RemoveTree(altered);
}

TEST(LoadBundle, AVerifiedFileThatIsNoLibraryFailsInDlopen) {
  std::string dir = MakeBundle("not an ELF file", "not an ELF file");
  auto result = LoadBundle(dir, Here());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ErrorKind::kLoad);
  (void)RemoveTree(dir);
}

TEST(LoadBundle, ADirectoryWithoutManifestIsNotABundle) {
  auto dir = MakeTempDir("jaxcc-bundle-test");
  auto result = LoadBundle(*dir, Here());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ErrorKind::kBundle);
  EXPECT_NE(result.error().message.find("not a jaxcc bundle"), std::string::npos);
  (void)RemoveTree(*dir);
}

}  // namespace
}  // namespace jaxcc::bundle
