// Header digests with a stat-keyed memo, so a warm load stats headers but never reads them.
#include "cache/header_digest.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::cache {
namespace {

using nlohmann::json;

constexpr const char* kDigestSchema = "jaxcc-header-digest-v1";
// A file modified this recently may be modified again within the same mtime tick without its
// stat changing (the "racy timestamp" problem ccache and git guard against): hash, don't memo.
constexpr std::int64_t kRacyWindowNs = 2'000'000'000;
// Entries from other header sets are kept (several jaxlib installs may share one cache), up to
// this many; beyond it only the entries used by the current call survive.
constexpr size_t kMaxMemoEntries = 20000;

struct HeaderFile {
  std::string relative;
  std::string path;
  FileInfo info;
};

// Regular files under `dir`, recursively, sorted by relative path. Symlinks to files count;
// symlinks to directories are not entered, so a link cycle cannot loop. readdir's d_type spares
// the lstat of every plain file and directory (a warm load walks these trees every time).
void Walk(const std::string& dir, const std::string& relative, std::vector<HeaderFile>& out) {
  std::vector<std::pair<std::string, unsigned char>> entries;
  if (DIR* handle = ::opendir(dir.c_str())) {
    while (struct dirent* entry = ::readdir(handle)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") entries.emplace_back(std::move(name), entry->d_type);
    }
    ::closedir(handle);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [name, type] : entries) {
    std::string path = JoinPath(dir, name);
    std::string rel = relative.empty() ? name : relative + "/" + name;
    bool is_dir = type == DT_DIR;
    if (type != DT_DIR && type != DT_REG) {  // a symlink, or a filesystem without d_type
      struct stat link_stat;
      if (::lstat(path.c_str(), &link_stat) != 0) continue;
      is_dir = S_ISDIR(link_stat.st_mode);
    }
    if (is_dir) {
      Walk(path, rel, out);
      continue;
    }
    FileInfo info = StatPath(path);
    if (info.exists && !info.is_dir && S_ISREG(info.mode)) out.push_back({rel, path, info});
  }
}

std::string MemoKey(const HeaderFile& file) {
  return file.path + "|" + std::to_string(file.info.size) + "|" +
         std::to_string(file.info.mtime_ns) + "|" + std::to_string(file.info.inode);
}

std::string PathOfMemoKey(const std::string& key) {
  // The path may itself contain '|': the last three fields are numbers, so cut from the right.
  size_t cut = key.size();
  for (int i = 0; i < 3 && cut != std::string::npos && cut > 0; ++i) cut = key.rfind('|', cut - 1);
  return cut == std::string::npos ? key : key.substr(0, cut);
}

std::map<std::string, std::string> LoadMemo(const std::string& memo_path) {
  std::map<std::string, std::string> memo;
  if (memo_path.empty()) return memo;
  auto text = ReadFile(memo_path);
  if (!text.ok()) return memo;
  json object = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return memo;  // corrupt or discarded: start afresh
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.value().is_string()) memo[it.key()] = it.value().get<std::string>();
  }
  return memo;
}

void SaveMemo(const std::string& memo_path, const std::map<std::string, std::string>& memo) {
  json object = json::object();
  for (const auto& [key, digest] : memo) object[key] = digest;
  // The memo only saves time: failing to write it is not worth failing a build over.
  if (!MakeDirs(DirName(memo_path), 0700).ok()) return;
  (void)WriteFileAtomic(memo_path,
                        object.dump(1, ' ', false, json::error_handler_t::replace) + "\n", 0600);
}

// The one-record fast path: "<digest>\n<stat listing>" in `<memo>.last`. The
// listing has every file's path, size, mtime and inode, so a match means the same thing as a memo
// hit for every file, without parsing the memo's JSON.
std::string StatListing(const std::vector<std::vector<HeaderFile>>& per_dir) {
  std::string listing = kDigestSchema;
  for (size_t d = 0; d < per_dir.size(); ++d) {
    listing += "\ndir " + std::to_string(d) + " " + std::to_string(per_dir[d].size());
    for (const HeaderFile& file : per_dir[d])
      listing += "\n" + file.relative + "\t" + MemoKey(file);
  }
  return listing;
}

}  // namespace

Result<std::string> DigestDirectories(const std::vector<std::string>& dirs,
                                      const std::string& memo_path) {
  std::vector<std::vector<HeaderFile>> per_dir(dirs.size());
  for (size_t d = 0; d < dirs.size(); ++d) {
    if (StatPath(dirs[d]).is_dir) Walk(dirs[d], "", per_dir[d]);
  }
  std::string last_path = memo_path.empty() ? "" : memo_path + ".last";
  // The listing itself, not a hash of it: a comparison costs less than hashing the listing.
  std::string listing = StatListing(per_dir);
  if (!last_path.empty()) {
    auto last = ReadFile(last_path);
    if (last.ok() && last->size() == 64 + 1 + listing.size() &&
        last->compare(65, std::string::npos, listing) == 0) {
      return last->substr(0, 64);
    }
  }

  std::map<std::string, std::string> old_memo = LoadMemo(memo_path);
  std::map<std::string, std::string> used;  // memo entries for the files seen now
  bool all_settled = true;                  // no file inside the racy window
  std::set<std::string> seen_paths;
  std::int64_t now_ns = WallClockNs();

  Sha256Builder digest;
  digest.UpdateField(kDigestSchema);
  digest.UpdateField(std::to_string(dirs.size()));
  for (size_t d = 0; d < dirs.size(); ++d) {
    const std::vector<HeaderFile>& files = per_dir[d];
    // Directory index, not path: the -I flags (and so the key) already carry the paths; this
    // digest is about content.
    digest.UpdateField("dir");
    digest.UpdateField(std::to_string(d));
    digest.UpdateField(std::to_string(files.size()));
    for (const HeaderFile& file : files) {
      std::string key = MemoKey(file);
      seen_paths.insert(file.path);
      std::string sha;
      if (auto hit = old_memo.find(key); hit != old_memo.end()) {
        sha = hit->second;
        used[key] = sha;
      } else {
        auto hashed = Sha256FileHex(file.path);
        // An unreadable header still contributes (as a marker), so its later repair changes the
        // digest; the compiler will report it if the code actually includes it.
        sha = hashed.ok() ? *hashed : "<unreadable>";
        if (hashed.ok() && now_ns - file.info.mtime_ns > kRacyWindowNs) {
          used[key] = sha;
        } else {
          all_settled = false;
        }
      }
      digest.UpdateField(file.relative);
      digest.UpdateField(sha);
    }
  }

  if (!memo_path.empty()) {
    std::map<std::string, std::string> new_memo = used;
    if (old_memo.size() + used.size() <= kMaxMemoEntries) {
      for (const auto& [key, sha] : old_memo) {
        // Drop superseded entries (same path, old stat); keep other header sets' entries.
        if (seen_paths.count(PathOfMemoKey(key)) == 0) new_memo.emplace(key, sha);
      }
    }
    if (new_memo != old_memo) SaveMemo(memo_path, new_memo);
  }
  std::string result = digest.FinishHex();
  if (!last_path.empty() && all_settled) {
    (void)WriteFileAtomic(last_path, result + "\n" + listing, 0600);
  }
  return result;
}

}  // namespace jaxcc::cache
