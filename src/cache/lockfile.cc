// Lock files: link(2) for the atomic step, the holder's identity inside, staleness judged by pid on
// the holder's own host and by age everywhere else.
#include "cache/lockfile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "util/fs.h"
#include "util/host_identity.h"

namespace jaxcc::cache::lockfile {
namespace {

// A ".break" guard lives for microseconds; one this old belongs to a breaker that died.
constexpr double kGuardStaleSeconds = 30;

struct Holder {
  std::string host;
  std::string boot_id;
  long pid = 0;
};

Holder ParseHolder(const std::string& text) {
  Holder holder;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    if (key == "host") holder.host = value;
    if (key == "boot") holder.boot_id = value;
    if (key == "pid") holder.pid = std::strtol(value.c_str(), nullptr, 10);
  }
  return holder;
}

double Seconds(const struct timespec& t) { return t.tv_sec + t.tv_nsec * 1e-9; }

// Creates a file with `text` under a unique temporary name beside `path` and links it to `path`.
// 1 = linked, 0 = `path` exists, -1 = error. `server_now` receives the temporary file's mtime: the
// filesystem's clock, so ages compare without trusting the clocks of other hosts.
int LinkOnce(const std::string& path, const std::string& text, double* server_now) {
  std::string temp = path + ".tmp-" + UniqueTempTag();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  ::close(fd);
  if (!written) {
    ::unlink(temp.c_str());
    errno = saved == 0 ? EIO : saved;
    return -1;
  }
  int linked = ::link(temp.c_str(), path.c_str());
  int link_errno = errno;
  struct stat st;
  bool have = ::stat(temp.c_str(), &st) == 0;
  ::unlink(temp.c_str());
  if (have && server_now != nullptr) *server_now = Seconds(st.st_mtim);
  // NFS may lose the reply of a link that succeeded: a link count of 2 says it did.
  if (linked == 0 || (have && st.st_nlink == 2)) return 1;
  if (link_errno == EEXIST) return 0;
  errno = link_errno;
  return -1;
}

bool ProcessIsGone(long pid) { return pid <= 0 || (::kill(pid, 0) == -1 && errno == ESRCH); }

bool IsStale(const std::string& text, double age_seconds, double foreign_stale_seconds) {
  Holder holder = ParseHolder(text);
  HostIdentity me = ThisHost();
  if (!holder.host.empty() && holder.host == me.host) {
    if (holder.boot_id != me.boot_id) return true;  // written before this host's last boot
    if (holder.pid == me.pid) return false;         // another thread of this process
    return ProcessIsGone(holder.pid);
  }
  // Another host's pids mean nothing here: only age can tell (or an unreadable holder).
  return age_seconds >= foreign_stale_seconds;
}

// Removes the lock at `path` if its holder is stale. A ".break" guard makes breaking exclusive,
// and the holder's text is read again under it: two waiters that both judged the same holder
// stale cannot remove the lock that the first of them then took.
bool BreakIfStale(const std::string& path, double server_now, double foreign_stale_seconds) {
  auto text = ReadFile(path);
  FileInfo info = StatPath(path);
  if (!text.ok() || !info.exists) return true;  // released meanwhile: try again
  double age = server_now - info.mtime_ns * 1e-9;
  if (!IsStale(*text, age, foreign_stale_seconds)) return false;
  std::string guard = path + ".break";
  std::string token = MakeToken();
  double guard_now = server_now;
  int got = LinkOnce(guard, token, &guard_now);
  if (got != 1) {
    FileInfo guard_info = StatPath(guard);
    if (got == 0 && guard_info.exists &&
        guard_now - guard_info.mtime_ns * 1e-9 >= kGuardStaleSeconds) {
      ::unlink(guard.c_str());
    }
    return false;
  }
  auto again = ReadFile(path);
  bool broken = again.ok() && *again == *text && ::unlink(path.c_str()) == 0;
  Unlock(guard, token);
  return broken;
}

}  // namespace

std::string MakeToken() {
  HostIdentity me = ThisHost();
  return "jaxcc-lock 1\nhost=" + me.host + "\nboot=" + me.boot_id +
         "\npid=" + std::to_string(me.pid) + "\nnonce=" + RandomHex(16) + "\n";
}

int TryLock(const std::string& path, const std::string& token, double foreign_stale_seconds) {
  for (int round = 0; round < 2; ++round) {
    double server_now = 0;
    int got = LinkOnce(path, token, &server_now);
    if (got != 0) return got;
    if (round == 1 || !BreakIfStale(path, server_now, foreign_stale_seconds)) return 0;
  }
  return 0;
}

void Unlock(const std::string& path, const std::string& token) {
  auto text = ReadFile(path);
  if (text.ok() && *text == token) ::unlink(path.c_str());
}

std::string DescribeHolder(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return "another process";
  Holder holder = ParseHolder(*text);
  if (holder.host.empty()) return "another process (lock file " + path + ")";
  HostIdentity me = ThisHost();
  std::string where = holder.host == me.host ? " (this host)" : " (another host)";
  return "pid " + std::to_string(holder.pid) + " on host " + holder.host + where;
}

}  // namespace jaxcc::cache::lockfile
