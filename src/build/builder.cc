#include "build/builder.h"

#include <chrono>
#include <cstdio>
#include <set>

#include "build/compile_diagnostics.h"
#include "build/depfile.h"
#include "build/link_trace.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace jaxcc::build {
namespace {

Status WriteIfChanged(const std::string& path, const std::string& contents) {
  auto existing = ReadFile(path);
  if (existing.ok() && *existing == contents) return OkStatus();
  return WriteFile(path, contents);
}

std::vector<std::string> CollectDependencies(const std::string& build_dir,
                                             const BuildGraph& graph) {
  std::set<std::string> unique;
  std::vector<std::string> objects = graph.prebuilt_objects;  // reused: their recorded headers
  for (const CompileStep& step : graph.compiles) objects.push_back(step.object);
  for (const std::string& object : objects) {
    auto text = ReadFile(JoinPath(build_dir, object + ".d"));
    if (!text.ok()) continue;
    for (std::string& dep : ParseDepfile(*text)) {
      if (dep.empty() || dep[0] != '/') dep = JoinPath(build_dir, dep);
      unique.insert(AbsolutePath(dep));
    }
  }
  // What the link read: archives and objects named by path or found by -l (decision 175).
  if (auto trace = ReadFile(JoinPath(build_dir, LinkTraceFile(graph.output))); trace.ok()) {
    for (std::string& input : ParseLinkTrace(*trace)) {
      if (input.empty() || input[0] != '/') input = JoinPath(build_dir, input);
      unique.insert(AbsolutePath(input));
    }
  }
  return {unique.begin(), unique.end()};
}

// nvcc's depfiles also list the names of `#line` directives ("<module>", "x.cu (jaxcc bridge)"),
// which are not files: ninja would then consider the object dirty forever and a build directory
// would never be incremental. Rewriting each depfile with only what exists fixes that; ninja reads
// depfiles when it starts (the rules use `depfile` without `deps = gcc`), so the next run sees it.
void DropMissingPrerequisites(const std::string& build_dir, const BuildGraph& graph) {
  for (const CompileStep& step : graph.compiles) {
    std::string path = JoinPath(build_dir, step.object + ".d");
    auto text = ReadFile(path);
    if (!text.ok()) continue;
    std::vector<std::string> deps = ParseDepfile(*text);
    std::string cleaned = EscapeDepfilePath(step.object) + ":";
    bool dropped = false;
    for (const std::string& dep : deps) {
      std::string absolute = (!dep.empty() && dep[0] == '/') ? dep : JoinPath(build_dir, dep);
      if (dep.empty() || !StatPath(absolute).exists) {
        dropped = true;
        continue;
      }
      cleaned += " \\\n  " + EscapeDepfilePath(dep);
    }
    if (dropped) (void)WriteFile(path, cleaned + "\n");
  }
}

}  // namespace

Result<BuildOutcome> RunBuild(const BuildRequest& request) {
  JAXCC_RETURN_IF_ERROR(MakeDirs(request.build_dir, 0700));
  for (const auto& [name, contents] : request.files) {
    JAXCC_RETURN_IF_ERROR(WriteIfChanged(JoinPath(request.build_dir, name), contents));
  }
  JAXCC_RETURN_IF_ERROR(
      WriteIfChanged(JoinPath(request.build_dir, "build.ninja"), RenderNinjaFile(request.graph)));
  if (!request.graph.compile_database.empty()) {
    JAXCC_RETURN_IF_ERROR(WriteIfChanged(JoinPath(request.build_dir, kCompileDatabaseName),
                                         request.graph.compile_database));
  }

  // -k 0: keep going after a failure, so every unit that fails reports its error at once.
  std::vector<std::string> argv = {request.ninja, "-C", request.build_dir, "-k", "0"};
  if (request.workers > 0) {
    argv.push_back("-j");
    argv.push_back(std::to_string(request.workers));
  }
  if (request.verbose) argv.push_back("-v");

  ProcessOptions options;
  options.timeout_seconds = request.timeout_seconds;
  options.environment = {std::string("NINJA_STATUS=") + kNinjaStatus};
  std::string pending;  // a line of ninja's output not yet ended
  options.on_output = [&](std::string_view chunk) {
    if (request.on_output) request.on_output(chunk);
    if (!request.on_progress) return;
    pending.append(chunk);
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      int finished = 0, total = 0;
      if (ParseNinjaStatus(pending.substr(start, end - start), &finished, &total)) {
        request.on_progress(finished, total);
      }
    }
    pending.erase(0, start);
  };
  const std::string ninja_log = JoinPath(request.build_dir, ".ninja_log");
  // A reused build directory keeps older runs' lines: this run's start where the log ends now.
  const FileInfo log_before = StatPath(ninja_log);
  const size_t log_offset = log_before.exists ? static_cast<size_t>(log_before.size) : 0;
  auto start = std::chrono::steady_clock::now();
  auto run = RunProcess(argv, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run.ok()) return MakeError(ErrorKind::kToolchain, run.error().message);

  DropMissingPrerequisites(request.build_dir, request.graph);
  std::string log_path = JoinPath(request.build_dir, "build.log");
  (void)WriteFile(log_path, ShellJoin(argv) + "\n" + run->output);
  if (run->timed_out) {
    char seconds[32];  // %g: "600", "0.5" (a cast to int printed a sub-second limit as 0)
    std::snprintf(seconds, sizeof seconds, "%g", request.timeout_seconds);
    return MakeError(ErrorKind::kCompile,
                     std::string("the build did not finish within ") + seconds +
                         " s and was stopped. Raise JAXCC_BUILD_TIMEOUT if the kernel is "
                         "really that large.",
                     log_path);
  }
  if (run->exit_code != 0) {
    // The compiler disagreeing with the signature jaxcc read is a signature error at the
    // user's line, not a failure of the user's code (decision 147).
    if (std::optional<std::string> proof = SignatureProofFailure(run->output)) {
      return MakeError(ErrorKind::kSignature, *proof, log_path);
    }
    std::string first = FailedBuildMessage(run->output);
    std::string hint = FixHint(first);
    return MakeError(ErrorKind::kCompile, hint.empty() ? first : first + "\n" + hint, log_path);
  }
  BuildOutcome outcome;
  outcome.library_path = JoinPath(request.build_dir, request.graph.output);
  outcome.log = run->output;
  outcome.seconds = seconds;
  outcome.dependencies = CollectDependencies(request.build_dir, request.graph);
  if (auto log = ReadFile(ninja_log); log.ok()) {
    outcome.steps = ParseNinjaLogSince(*log, log_offset);
  }
  return outcome;
}

}  // namespace jaxcc::build
