// The fixture the cache directory's tests share: a scratch root, sample libraries, published
// entries and settled dependencies.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cache/cache_dir.h"
#include "cache/test_scratch_dir.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {

using testing_util::Age;
using testing_util::ScratchDir;

inline const std::string kKey = Sha256Hex("key one");
inline const std::string kOtherKey = Sha256Hex("key two");

class CacheDirTest : public testing::Test {
 protected:
  std::string root() const { return scratch_ / "cache"; }

  // A stand-in for a built library: any bytes will do, the cache never looks inside.
  std::string MakeLibrary(const std::string& contents) {
    std::string path = scratch_ / ("built-" + RandomHex(6) + ".so");
    EXPECT_TRUE(WriteFile(path, contents).ok());
    return path;
  }

  Result<Entry> PublishSample(const CacheDir& cache, const std::string& name,
                              const std::string& key, const std::string& contents,
                              std::vector<Dependency> deps = {}) {
    Manifest manifest;
    manifest.function_names = {"add"};
    manifest.dependencies = std::move(deps);
    manifest.jaxcc_version = "test";
    return cache.Publish(name, key, MakeLibrary(contents), manifest);
  }

  Dependency MakeDependency(const std::string& name, const std::string& contents) {
    std::string path = scratch_ / name;
    EXPECT_TRUE(WriteFile(path, contents).ok());
    FileInfo info = Age(path, 100);
    // The full stamp, as a build records a settled header (the ctime of a file written just now
    // has not settled, so StampedDependency would leave it out).
    return Dependency{path,          info.size, info.mtime_ns, Sha256Hex(contents),
                      info.ctime_ns, info.inode};
  }

  ScratchDir scratch_;
};

}  // namespace jaxcc::cache
