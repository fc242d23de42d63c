// What a compiler is beyond its path and version line: the bytes of its driver (ccache's
// `compiler_check=content`), and the directories it searches by itself, both memoised by the
// driver's stat stamp so a warm process starts no subprocess and reads no binary.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace jaxcc::toolchain {

/// "sha256:<hex>" of the file at `path` (a compiler driver, or the wrapper script a $CXX names),
/// remembered in `memo_path` and in this process by ExecutableIdentity (path, size, mtime,
/// ctime, inode): a rewritten script, a reinstalled driver or a `cp -p` over it is another
/// identity. A file that cannot be read is an ErrorKind::kToolchain error naming it.
Result<std::string> ExecutableDigest(const std::string& path, const std::string& memo_path);

/// The compiler's own search directories, as it reports them with no environment variable of
/// the CPATH family or LIBRARY_PATH set: the `#include <...>` list of `-E -v` and the
/// `libraries:` list of `-print-search-dirs`, normalised, existing directories only. Files under
/// them belong to the toolchain and the C library, which packages replace by rename: the build
/// watches their directories instead of each file (decision 171). Remembered like the digest.
/// Empty (not an error) when the compiler does not answer: every file is then tracked alone.
std::vector<std::string> BuiltinSearchDirs(const std::string& compiler,
                                           const std::string& memo_path);

/// Parses the two outputs above (for tests): `-E -v` stderr and `-print-search-dirs` stdout.
std::vector<std::string> ParseBuiltinSearchDirs(const std::string& verbose_preprocess,
                                                const std::string& search_dirs);

}  // namespace jaxcc::toolchain
