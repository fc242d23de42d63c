// One digest over a set of header directories, memoised across processes by file stat so a warm
// load never re-reads header bytes.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::cache {

/// Digest of every regular file under each directory (recursive, sorted, path + content).
/// `memo_path` is a small JSON file mapping "<path>|<size>|<mtime_ns>|<inode>" to the file's
/// SHA-256; only files whose stat changed are re-read. The memo is rewritten atomically when it
/// changed; an unreadable or corrupt memo is ignored (rebuilt), never an error. An empty
/// memo_path disables memoisation. Beside it, `<memo_path>.last` holds one record: the digest and
/// the whole stat listing it came from (every file's path, size, mtime, inode); while
/// the listing is unchanged that record answers without parsing the memo. It is written only
/// when no file is inside the racy-timestamp window.
Result<std::string> DigestDirectories(const std::vector<std::string>& dirs,
                                      const std::string& memo_path);

}  // namespace jaxcc::cache
