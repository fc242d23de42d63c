#include "util/host_identity.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "util/fs.h"

namespace jaxcc {
namespace {

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

}  // namespace

std::string SafeHostName(const std::string& text) {
  std::string name;
  for (char c : text) {
    if (name.size() == 64) break;
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    name += keep ? c : '_';
  }
  return name.empty() ? "unknown" : name;
}

std::string ThisHostName() {
  if (const char* fake = std::getenv("JAXCC_TEST_HOST"); fake != nullptr && *fake != '\0') {
    return SafeHostName(fake);
  }
  char name[256] = {};
  return SafeHostName(::gethostname(name, sizeof(name) - 1) == 0 ? name : "");
}

HostIdentity ThisHost() {
  HostIdentity id;
  id.pid = ::getpid();
  id.host = ThisHostName();
  if (const char* fake = std::getenv("JAXCC_TEST_BOOT_ID"); fake != nullptr && *fake != '\0') {
    id.boot_id = fake;
  } else {
    auto text = ReadFile("/proc/sys/kernel/random/boot_id");
    id.boot_id = text.ok() ? Trimmed(*text) : "";
  }
  return id;
}

std::string UniqueTempTag() {
  return ThisHostName() + "-" + std::to_string(::getpid()) + "-" + RandomHex(8);
}

}  // namespace jaxcc
