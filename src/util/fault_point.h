// Named pauses for fault-injection tests. With JAXCC_FAULT_STALL=<point>:<seconds> in the
// environment, reaching <point> prints "jaxcc-fault-stall:<point>" on stderr and sleeps, so a test
// can SIGKILL the process at exactly that step of a build, publish or load. Unset (always, outside
// tests) it costs one getenv.
#pragma once

namespace jaxcc {

/// Points used by the pipeline: "build" (before ninja runs), "publish" (library copied into the
/// entry, manifest not yet written), "load" (entry verified, before dlopen).
void FaultPoint(const char* point);

}  // namespace jaxcc
