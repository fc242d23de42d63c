// posix_spawn-based process runner: safe in multi-threaded hosts such as a Python process
// running JAX, where fork() without exec would copy locked mutexes.
#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace jaxcc {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string FindExecutable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : "";
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options) {
  if (argv.empty()) return MakeError(ErrorKind::kIo, "internal: empty command line");
  std::string program = FindExecutable(argv[0]);
  if (program.empty()) {
    return MakeError(ErrorKind::kIo,
                     "cannot run '" + argv[0] + "': not found or not executable (searched PATH)");
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return MakeError(ErrorKind::kIo, std::string("pipe() failed: ") + std::strerror(errno));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  posix_spawnattr_setsigmask(&attr, &empty_mask);

  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);

  // This process's environment, with options.environment's entries replacing those of the same
  // name (built before the spawn: posix_spawn takes a finished array).
  std::vector<char*> c_env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    bool replaced = false;
    for (const std::string& extra : options.environment) {
      size_t eq = extra.find('=');
      if (eq != std::string::npos && text.size() > eq &&
          text.substr(0, eq + 1) == extra.substr(0, eq + 1)) {
        replaced = true;
      }
    }
    if (!replaced) c_env.push_back(*entry);
  }
  for (const std::string& extra : options.environment)
    c_env.push_back(const_cast<char*>(extra.c_str()));
  c_env.push_back(nullptr);

  pid_t pid = 0;
  int spawn_error =
      ::posix_spawn(&pid, program.c_str(), &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fds[1]);
  if (spawn_error != 0) {
    ::close(pipe_fds[0]);
    return MakeError(ErrorKind::kIo,
                     "cannot start '" + program + "': " + std::strerror(spawn_error));
  }

  ProcessResult result;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_seconds);
  char buffer[8192];
  bool open = true;
  while (open) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (remaining.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    struct pollfd pfd {
      pipe_fds[0], POLLIN, 0
    };
    int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(remaining.count(), 200)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    std::string_view chunk(buffer, static_cast<size_t>(n));
    result.output.append(chunk);
    if (options.on_output) options.on_output(chunk);
  }
  ::close(pipe_fds[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Grandchildren (compilers started by ninja) share the group; make sure none is left behind.
  if (result.timed_out) ::kill(-pid, SIGKILL);
  result.exit_code = DecodeWaitStatus(status);
  return result;
}

std::string ShellQuote(std::string_view arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-+=/.,:@%") == std::string_view::npos) {
    return std::string(arg);
  }
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& a : argv) {
    if (!joined.empty()) joined += ' ';
    joined += ShellQuote(a);
  }
  return joined;
}

}  // namespace jaxcc
