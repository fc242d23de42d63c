#include "cache/object_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "cache/watched_directory.h"
#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void Forget(const std::string& dir, const std::string& key) {
  for (const char* suffix : {".o", ".sha256", ".deps"}) {
    ::unlink(JoinPath(dir, key + suffix).c_str());
  }
}

std::string Digest(const std::string& object, const std::string& deps_text) {
  Sha256Builder hash;
  hash.UpdateField(object);
  hash.UpdateField(deps_text);
  return hash.FinishHex();
}

std::string DependencyText(const std::vector<ObjectDependency>& dependencies) {
  std::string text;
  for (const ObjectDependency& dep : dependencies) text += dep.sha256 + " " + dep.path + "\n";
  return text;
}

std::optional<std::vector<ObjectDependency>> ParseDependencies(const std::string& text) {
  std::vector<ObjectDependency> deps;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) return std::nullopt;
    std::string line = text.substr(start, end - start);
    size_t space = line.find(' ');
    if (space != 64) return std::nullopt;
    deps.push_back({line.substr(space + 1), line.substr(0, space)});
    start = end + 1;
  }
  return deps;
}

}  // namespace

ObjectCache::ObjectCache(const std::string& cache_root, int max_objects, std::int64_t max_bytes)
    : dir_(JoinPath(cache_root, ".objects")), max_objects_(max_objects), max_bytes_(max_bytes) {}

std::string ObjectCache::Key(const std::string& source_text,
                             const std::vector<std::string>& command,
                             const std::string& toolchain_version,
                             const std::string& header_digest) {
  Sha256Builder hash;
  hash.UpdateField("jaxcc unit object v2");
  hash.UpdateField(source_text);
  hash.UpdateField(std::to_string(command.size()));
  for (const std::string& word : command) hash.UpdateField(word);
  hash.UpdateField(toolchain_version);
  hash.UpdateField(header_digest);
  return hash.FinishHex();
}

std::optional<std::vector<ObjectDependency>> ObjectCache::Fetch(
    const std::string& key, const std::string& destination) const {
  std::string object = JoinPath(dir_, key + ".o");
  auto expected = ReadFile(JoinPath(dir_, key + ".sha256"));
  if (!expected.ok()) return std::nullopt;
  auto contents = ReadFile(object);
  auto deps_text = ReadFile(JoinPath(dir_, key + ".deps"));
  std::optional<std::vector<ObjectDependency>> deps;
  if (contents.ok() && deps_text.ok() && Digest(*contents, *deps_text) == *expected) {
    deps = ParseDependencies(*deps_text);
  }
  if (!deps) {
    Forget(dir_, key);
    return std::nullopt;
  }
  // A header edited since: not damage, just not this object (the next store replaces it).
  for (const ObjectDependency& dep : *deps) {
    if (dep.sha256 == kAbsentFile) {
      if (StatPath(dep.path).exists) return std::nullopt;  // a header that shadows one it read
      continue;
    }
    if (!dep.path.empty() && dep.path.back() == '/') {  // a searched directory: its names
      if (DirectoryNamesDigest(dep.path.substr(0, dep.path.size() - 1)) != dep.sha256) {
        return std::nullopt;
      }
      continue;
    }
    auto now = Sha256FileHex(dep.path);
    if (!now.ok() || *now != dep.sha256) return std::nullopt;
  }
  // The destination is a private build directory's, removed after the link: never synced.
  if (!WriteFileAtomic(destination, *contents, 0644, Durability::kVerifiedOnRead).ok()) {
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, object.c_str(), nullptr, 0);  // most recently used
  return deps;
}

void ObjectCache::Store(const std::string& key, const std::string& object_path,
                        const std::vector<ObjectDependency>& dependencies) const {
  auto contents = ReadFile(object_path);
  if (!contents.ok() || contents->empty()) return;
  for (const ObjectDependency& dep : dependencies) {
    if (dep.path.find('\n') != std::string::npos || dep.sha256.size() != 64) return;
  }
  if (!MakeDirs(dir_, 0700).ok()) return;
  std::string deps_text = DependencyText(dependencies);
  // Dependencies, then the digest of both, then the object: whatever a crash leaves between the
  // renames, or of writes the disk never got, fails verification (a miss), never links a wrong
  // object. Fetch reads and hashes all three every time, so nothing here needs an fsync.
  constexpr Durability kVerified = Durability::kVerifiedOnRead;
  if (!WriteFileAtomic(JoinPath(dir_, key + ".deps"), deps_text, 0600, kVerified).ok()) return;
  if (!WriteFileAtomic(JoinPath(dir_, key + ".sha256"), Digest(*contents, deps_text), 0600,
                       kVerified)
           .ok()) {
    return;
  }
  if (!WriteFileAtomic(JoinPath(dir_, key + ".o"), *contents, 0600, kVerified).ok()) return;
  Evict();
}

bool ObjectCache::Remove(const std::string& key) const {
  if (key.size() != 64 || key.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return false;  // a manifest's list is data: never a path outside the object directory
  }
  const bool present = StatPath(JoinPath(dir_, key + ".o")).exists;
  Forget(dir_, key);
  return present;
}

void ObjectCache::Evict() const {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> objects;  // (mtime, size, key)
  std::int64_t total = 0;
  for (const std::string& name : ListDir(dir_)) {
    if (!EndsWith(name, ".o")) continue;
    FileInfo info = StatPath(JoinPath(dir_, name));
    if (!info.exists) continue;
    objects.emplace_back(info.mtime_ns, info.size, name.substr(0, name.size() - 2));
    total += info.size;
  }
  std::sort(objects.begin(), objects.end());
  size_t count = objects.size();
  for (const auto& [mtime, size, key] : objects) {
    (void)mtime;
    bool too_many = static_cast<int>(count) > max_objects_;
    bool too_big = max_bytes_ > 0 && total > max_bytes_;
    if (!too_many && !too_big) break;
    if (count == 1) break;  // the object just stored stays
    Forget(dir_, key);
    --count;
    total -= size;
  }
}

}  // namespace jaxcc::cache
