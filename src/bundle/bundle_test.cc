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
  // Every field differs from its default, so a field the writer or reader drops shows here.
  BundleManifest m = Sample();
  m.jaxcc_version = "9.8.7";
  m.platform = "cuda";
  m.cuda_archs = {"80", "90a"};
  m.ptx_arch = "90";
  m.ffi_api = {1, 7};
  m.nvcc = "/usr/local/cuda/bin/nvcc (release 13.0)";
  m.optimization_level = 2;
  m.target_prefix = "demo_prefix";
  m.vmap_method = "broadcast_all";
  m.created_unix = 1700000123;
  m.functions[0].source_index = 2;
  // A rule with every clause kind (issue 25: bundles dropped rules); read back canonically.
  m.functions[0].sharding_rule = "r k -> r; reduction: k";
  FunctionSpec second;
  second.name = "rows";
  second.params = {{ParamKind::kArg, "x", std::nullopt},
                   {ParamKind::kStream, "", std::nullopt},
                   {ParamKind::kRet, "y", std::nullopt}};
  second.params[0].dtype = argspec::ElementType::kBFloat16;  // declared dtypes (decision 158)
  second.params[2].dtype = argspec::ElementType::kComplex128;
  second.sharding_rule = "... r c -> ... r c; need_replication: c";
  m.functions.push_back(second);
  m.files.push_back({"extra.bin", "data", 5, Sha256Hex("hello")});
  m.needed_libraries = {"libopenblas.so.0", "libgomp.so.1"};
  std::string text = BundleManifestToJson(m);
  auto back = BundleManifestFromJson(text, "test");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->format, m.format);
  EXPECT_EQ(back->module_name, "demo");
  EXPECT_EQ(back->key, "k123");
  EXPECT_EQ(back->jaxcc_version, "9.8.7");
  EXPECT_EQ(back->platform, "cuda");
  EXPECT_EQ(back->host, HostPlatform());
  EXPECT_EQ(back->cuda_archs, m.cuda_archs);
  EXPECT_EQ(back->ptx_arch, "90");
  EXPECT_EQ(back->ffi_api.major, 1);
  EXPECT_EQ(back->ffi_api.minor, 7);
  EXPECT_EQ(back->compiler, m.compiler);
  EXPECT_EQ(back->nvcc, m.nvcc);
  EXPECT_EQ(back->optimization_level, 2);
  EXPECT_EQ(back->target_prefix, "demo_prefix");
  EXPECT_EQ(back->vmap_method, "broadcast_all");
  EXPECT_EQ(back->created_unix, 1700000123);
  EXPECT_EQ(back->needed_libraries, m.needed_libraries);
  ASSERT_EQ(back->functions.size(), 2u);
  for (size_t f = 0; f < m.functions.size(); ++f) {
    const FunctionSpec& want = m.functions[f];
    const FunctionSpec& got = back->functions[f];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.namespaces, want.namespaces);
    EXPECT_EQ(got.source_index, want.source_index);
    EXPECT_EQ(got.sharding_rule, want.sharding_rule) << want.name;
    ASSERT_EQ(got.params.size(), want.params.size());
    for (size_t i = 0; i < want.params.size(); ++i) {
      EXPECT_EQ(got.params[i].kind, want.params[i].kind);
      EXPECT_EQ(got.params[i].name, want.params[i].name);
      EXPECT_EQ(got.params[i].attr_type, want.params[i].attr_type);
      EXPECT_EQ(got.params[i].dtype, want.params[i].dtype) << want.name << " " << i;
    }
  }
  ASSERT_EQ(back->files.size(), 2u);
  for (size_t i = 0; i < m.files.size(); ++i) {
    EXPECT_EQ(back->files[i].path, m.files[i].path);
    EXPECT_EQ(back->files[i].role, m.files[i].role);
    EXPECT_EQ(back->files[i].size, m.files[i].size);
    EXPECT_EQ(back->files[i].sha256, m.files[i].sha256);
  }
  // Written again, the same bytes: nothing read is lost on the next write either.
  EXPECT_EQ(BundleManifestToJson(*back), text);
}

TEST(BundleManifest, RulesAreCheckedOnReadAndOptionalInOlderBundles) {
  BundleManifest m = Sample();
  m.functions[0].sharding_rule = "a, b -> a";  // two inputs for a function of one
  auto back = BundleManifestFromJson(BundleManifestToJson(m), "test");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().kind, ErrorKind::kBundle);
  EXPECT_NE(back.error().message.find("sharding rule of 'scale'"), std::string::npos);
  m.functions[0].sharding_rule = "";
  std::string text = BundleManifestToJson(m);
  text.replace(text.find("\"sharding_rule\": \"\""), 19, "\"unrelated\": 0");
  back = BundleManifestFromJson(text, "test");  // a bundle from before rules were recorded
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->functions[0].sharding_rule, "");
}

TEST(BundleManifest, DtypesAreOptionalInOlderBundlesAndCheckedOnRead) {
  BundleManifest m = Sample();
  m.functions[0].params[0].dtype = argspec::ElementType::kFloat32;
  std::string text = BundleManifestToJson(m);
  ASSERT_NE(text.find("\"dtype\": \"float32\""), std::string::npos) << text;
  // Only a declared dtype is written: the untyped output has no field, as before decision 158.
  EXPECT_EQ(text.find("\"dtype\""), text.rfind("\"dtype\""));
  const std::string field = "\"dtype\": \"float32\"";
  std::string older = text;
  older.replace(older.find(field), field.size(), "\"unrelated\": 0");
  auto back = BundleManifestFromJson(older, "test");  // written before dtypes were recorded
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->functions[0].params[0].dtype.has_value());
  std::string unknown = text;
  unknown.replace(unknown.find(field), field.size(), "\"dtype\": \"float33\"");
  back = BundleManifestFromJson(unknown, "test");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().kind, ErrorKind::kBundle);
  EXPECT_NE(back.error().message.find("parameter 'x' of 'scale' has an unknown dtype"),
            std::string::npos)
      << back.error().message;
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

// Issue 49 item 7: a bundle built with -march=native on an AVX-512 machine died with SIGILL on
// an older CPU; it records the features its target enabled and is refused naming both sides.
TEST(Compat, ANativeTargetsFeatureThisCpuLacksIsRefusedNamingBoth) {
  BundleManifest m = Sample();
  m.cpu_target = "-march=sapphirerapids -mavx512f";
  m.cpu_features = {"sse4_2", "avx512f", "amx_tile"};
  Runtime runtime = Here();
  runtime.cpu_features = {"sse4_2", "avx2"};
  auto status = CheckCompatible(m, runtime);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kBundle);
  EXPECT_NE(status.error().message.find("avx512f, amx_tile"), std::string::npos);
  EXPECT_NE(status.error().message.find("-march=sapphirerapids"), std::string::npos);
  EXPECT_NE(status.error().message.find("-march=x86-64-v2"), std::string::npos);
  runtime.cpu_features = {"sse4_2", "avx512f", "amx_tile", "avx2"};
  EXPECT_TRUE(CheckCompatible(m, runtime).ok());
  auto back = BundleManifestFromJson(BundleManifestToJson(m), "t");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->cpu_target, m.cpu_target);
  EXPECT_EQ(back->cpu_features, m.cpu_features);
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
