#include "toolchain/cuda_arch.h"

#include <algorithm>
#include <cctype>

namespace jaxcc::toolchain {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

Error BadArch(const std::string& text, const std::string& why) {
  return MakeError(ErrorKind::kSpec,
                   "invalid GPU architecture '" + text + "': " + why +
                       ". Write it as a compute capability such as \"8.0\", \"86\", \"sm_90\" "
                       "or \"sm_90a\".");
}

int ArchNumber(const std::string& arch) {
  size_t end = 0;
  while (end < arch.size() && std::isdigit(static_cast<unsigned char>(arch[end]))) ++end;
  return std::stoi(arch.substr(0, end));
}

}  // namespace

Result<std::string> NormalizeArch(const std::string& text) {
  std::string s = text;
  s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }),
          s.end());
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* prefix : {"sm_", "compute_"}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::string(prefix).size());
  }
  std::string suffix;
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
    suffix = s.back();
    s.pop_back();
  }
  std::string digits;
  size_t dot = s.find('.');
  if (dot != std::string::npos) {
    std::string major = s.substr(0, dot), minor = s.substr(dot + 1);
    if (!AllDigits(major) || !AllDigits(minor) || minor.size() != 1) {
      return BadArch(text, "expected <major>.<minor>");
    }
    digits = major + minor;
  } else {
    if (!AllDigits(s)) return BadArch(text, "not a number");
    if (s.size() < 2) return BadArch(text, "a single digit is ambiguous; write e.g. \"8.0\"");
    digits = s;
  }
  if (digits.size() > 4 || std::stoi(digits) < 30) {
    return BadArch(text, "compute capabilities below 3.0 are not supported by nvcc");
  }
  return digits + suffix;
}

Result<std::vector<std::string>> ParseArchList(const std::vector<std::string>& items) {
  std::vector<std::string> arches;
  for (const std::string& item : items) {
    std::string word;
    auto flush = [&]() -> Status {
      if (word.empty()) return OkStatus();
      auto arch = NormalizeArch(word);
      word.clear();
      if (!arch.ok()) return arch.error();
      if (std::find(arches.begin(), arches.end(), *arch) == arches.end()) arches.push_back(*arch);
      return OkStatus();
    };
    for (char c : item) {
      if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) {
        JAXCC_RETURN_IF_ERROR(flush());
      } else {
        word += c;
      }
    }
    JAXCC_RETURN_IF_ERROR(flush());
  }
  if (arches.empty()) {
    return MakeError(ErrorKind::kSpec,
                     "no GPU architecture given; write one such as \"8.0\", \"86\" or "
                     "\"sm_90a\" (several separated by commas), or pass None to build for the "
                     "GPUs JAX sees");
  }
  std::sort(arches.begin(), arches.end(), [](const std::string& a, const std::string& b) {
    int na = ArchNumber(a), nb = ArchNumber(b);
    return na != nb ? na < nb : a.size() < b.size();
  });
  return arches;
}

std::vector<std::string> GencodeFlags(const std::vector<std::string>& arches) {
  std::vector<std::string> flags;
  for (const std::string& arch : arches) {
    flags.push_back("-gencode=arch=compute_" + arch + ",code=sm_" + arch);
  }
  if (!arches.empty()) {
    std::string ptx = std::to_string(ArchNumber(arches.back()));
    flags.push_back("-gencode=arch=compute_" + ptx + ",code=compute_" + ptx);
  }
  return flags;
}

}  // namespace jaxcc::toolchain
