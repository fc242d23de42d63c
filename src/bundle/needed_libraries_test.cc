#include "bundle/needed_libraries.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "util/fs.h"

namespace jaxcc::bundle {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& prefix) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

// This test binary is an ELF file linked against libstdc++ and libc: its own DT_NEEDED list.
TEST(ReadNeededLibraries, ReadsTheDynamicSectionOfARealBinary) {
  auto bytes = ReadFile("/proc/self/exe");
  ASSERT_TRUE(bytes.ok());
  auto needed = ReadNeededLibraries(*bytes);
  ASSERT_TRUE(needed.ok()) << needed.error().message;
  EXPECT_TRUE(Contains(*needed, "libc.so")) << needed->size();
  EXPECT_TRUE(Contains(*needed, "libstdc++.so"));
  // The system runtime is never recorded in a bundle.
  for (const std::string& kept : BundleDependencies(*needed)) {
    EXPECT_FALSE(IsSystemRuntimeLibrary(kept)) << kept;
  }
  EXPECT_FALSE(Contains(BundleDependencies(*needed), "libc.so"));
}

// Every truncation of a real ELF file is refused or read without running past its end (ASan
// would see an overread): never a crash on a damaged bundle.
TEST(ReadNeededLibraries, TruncatedAndForeignFilesAreBundleErrors) {
  auto bytes = ReadFile("/proc/self/exe");
  ASSERT_TRUE(bytes.ok());
  for (std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{63}, std::size_t{64},
                           bytes->size() / 2, bytes->size() - 1}) {
    auto needed = ReadNeededLibraries(std::string_view(*bytes).substr(0, size));
    if (!needed.ok()) EXPECT_EQ(needed.error().kind, ErrorKind::kBundle) << size;
  }
  auto text = ReadNeededLibraries("#!/bin/sh\necho not a library\n");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not a readable 64-bit ELF"), std::string::npos);
}

TEST(NeededLibraries, TheSystemRuntimeIsLeftOutAndOthersKeepTheirOrder) {
  EXPECT_EQ(BundleDependencies({"libopenblas.so.0", "libstdc++.so.6", "libm.so.6", "libgomp.so.1",
                                "libc.so.6", "ld-linux-x86-64.so.2", "libgcc_s.so.1"}),
            (std::vector<std::string>{"libopenblas.so.0", "libgomp.so.1"}));
}

TEST(NeededLibraries, HintsNameThePackageOrHowToFindIt) {
  EXPECT_NE(ProviderHint("libopenblas.so.0").find("libopenblas0"), std::string::npos);
  EXPECT_NE(ProviderHint("libgomp.so.1").find("libgomp1"), std::string::npos);
  EXPECT_NE(ProviderHint("libcublas.so.13").find("nvidia-cublas"), std::string::npos);
  EXPECT_NE(ProviderHint("libzzz_unknown.so.3").find("apt-file search libzzz_unknown.so.3"),
            std::string::npos);
}

TEST(NeededLibraries, OnlyLibrariesTheLoaderCannotOpenAreMissing) {
  auto missing = FindMissingLibraries({"libc.so.6", "libjaxcc_never_installed_dep.so.7"});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].soname, "libjaxcc_never_installed_dep.so.7");
  EXPECT_NE(missing[0].loader_message.find("libjaxcc_never_installed_dep.so.7"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::bundle
