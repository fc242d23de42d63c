// The rules a load's source text obeys, and reading a source file into a request: one owner for
// both, whether the text came inline from Python or from a file the core read itself.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "cache/cache_dir.h"
#include "pipeline/load_request.h"
#include "signature/resolve.h"
#include "util/result.h"

namespace jaxcc::pipeline {

/// Reads the file at `path` into a SourceFile labelled with that path, without a Python string in
/// between. A file that cannot be read, or whose bytes are not UTF-8, is a kSpec error naming the
/// file and the fix.
Result<signature::SourceFile> ReadSourceFile(const std::string& path);

/// A source file named by its path and stat stamp instead of its bytes (decision 139): a warm load
/// fingerprints the stamp and never opens the file; a load that must resolve signatures or build
/// reads it then (ReadDeferredSources).
struct DeferredSource {
  std::string path;
  cache::LibraryStamp stamp;
};

/// One source of a request as the Python layer hands it over.
using SourceInput = std::variant<signature::SourceFile, DeferredSource>;

/// $JAXCC_DEFER_SOURCES: true unless "0"; any value but "", "1" and "0" is a kSpec error naming
/// the accepted ones.
Result<bool> DeferSourcesSetting();

/// The file at `path` for a load: deferred when stat(2) shows a regular file on a local file
/// system whose mtime and ctime have settled (util/fs.h TimestampSettled: any later write moves
/// the stamp), else read now with ReadSourceFile's errors. A file changed within the last seconds
/// is read, because a second change within the same timestamp tick would keep its stamp; so is
/// every file when DeferSourcesSetting() is false.
Result<SourceInput> OpenSourceFile(const std::string& path);

/// Puts `inputs` into `request.sources`, and their stamps into `request.source_stamps` when one
/// of them is deferred; SourceInputs gives them back.
void SetSources(LoadRequest& request, std::vector<SourceInput> inputs);
std::vector<SourceInput> SourceInputs(const LoadRequest& request);

bool HasDeferredSources(const LoadRequest& request);

/// Reads every deferred source of `request` into its text (ReadSourceFile's errors) and checks the
/// texts (ValidateSources); the request then has no deferred source. True when every file still
/// had the stamp the request carries after it was read; false when one changed since, so the
/// stamps do not stand for the bytes read (a warm record must not be written under them).
Result<bool> ReadDeferredSources(LoadRequest& request);

/// Every source is text a compiler reads as written (no NUL byte, reported by line and column),
/// and not all of them are blank. Deferred sources (a known stamp in `deferred_stamps`) have no
/// text yet: they are skipped, and the blank rule waits for them to be read.
Status ValidateSources(const std::vector<signature::SourceFile>& sources,
                       const std::vector<cache::LibraryStamp>& deferred_stamps = {});

}  // namespace jaxcc::pipeline
