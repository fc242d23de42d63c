#include "util/fault_point.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace jaxcc {

void FaultPoint(const char* point) {
  const char* spec = std::getenv("JAXCC_FAULT_STALL");
  if (spec == nullptr) return;
  std::string text(spec);
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || text.compare(0, colon, point) != 0) return;
  double seconds = std::atof(text.c_str() + colon + 1);
  std::fprintf(stderr, "jaxcc-fault-stall:%s\n", point);
  std::fflush(stderr);
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace jaxcc
