#include "cache/object_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void Forget(const std::string& object, const std::string& digest) {
  ::unlink(object.c_str());
  ::unlink(digest.c_str());
}

}  // namespace

ObjectCache::ObjectCache(const std::string& cache_root, int max_objects)
    : dir_(JoinPath(cache_root, ".objects")), max_objects_(max_objects) {}

std::string ObjectCache::Key(const std::string& source_text,
                             const std::vector<std::string>& command,
                             const std::string& compiler_version,
                             const std::string& header_digest) {
  Sha256Builder hash;
  hash.UpdateField("jaxcc wrapper object v1");
  hash.UpdateField(source_text);
  hash.UpdateField(std::to_string(command.size()));
  for (const std::string& word : command) hash.UpdateField(word);
  hash.UpdateField(compiler_version);
  hash.UpdateField(header_digest);
  return hash.FinishHex();
}

bool ObjectCache::Fetch(const std::string& key, const std::string& destination) const {
  std::string object = JoinPath(dir_, key + ".o");
  std::string digest_path = JoinPath(dir_, key + ".sha256");
  auto expected = ReadFile(digest_path);
  if (!expected.ok()) return false;
  auto contents = ReadFile(object);
  if (!contents.ok() || Sha256Hex(*contents) != *expected) {
    Forget(object, digest_path);
    return false;
  }
  if (!WriteFileAtomic(destination, *contents).ok()) return false;
  ::utimensat(AT_FDCWD, object.c_str(), nullptr, 0);  // most recently used
  return true;
}

void ObjectCache::Store(const std::string& key, const std::string& object_path) const {
  auto contents = ReadFile(object_path);
  if (!contents.ok() || contents->empty()) return;
  if (!MakeDirs(dir_, 0700).ok()) return;
  // Digest first: an object without its digest never verifies, so a crash between the two
  // renames leaves a miss, not a wrong object.
  if (!WriteFileAtomic(JoinPath(dir_, key + ".sha256"), Sha256Hex(*contents), 0600).ok()) return;
  if (!WriteFileAtomic(JoinPath(dir_, key + ".o"), *contents, 0600).ok()) return;
  Evict();
}

void ObjectCache::Evict() const {
  std::vector<std::pair<std::int64_t, std::string>> objects;  // (mtime, key)
  for (const std::string& name : ListDir(dir_)) {
    if (!EndsWith(name, ".o")) continue;
    FileInfo info = StatPath(JoinPath(dir_, name));
    if (info.exists) objects.emplace_back(info.mtime_ns, name.substr(0, name.size() - 2));
  }
  if (static_cast<int>(objects.size()) <= max_objects_) return;
  std::sort(objects.begin(), objects.end());
  size_t excess = objects.size() - static_cast<size_t>(max_objects_);
  for (size_t i = 0; i < excess; ++i) {
    Forget(JoinPath(dir_, objects[i].second + ".o"), JoinPath(dir_, objects[i].second + ".sha256"));
  }
}

}  // namespace jaxcc::cache
