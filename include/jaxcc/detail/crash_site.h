// The mark a generated handler leaves on its thread while the user's function runs, so that a
// fatal signal inside the function can name it (jaxcc's crash report, src/loader/crash_report.h,
// decision 150b). Standard C++ only, no header at all: the wrapper includes it through
// frame_entry.h and must stay a few tens of milliseconds of the host compiler.
#pragma once

namespace jaxcc::detail {

/// What a crash report says about one function: static data of the wrapper, never freed.
struct FrameCrashSite {
  const char* module;    ///< the module's name (its FFI targets are `<module>.<function>`)
  const char* function;  ///< the user's function
  const char* source;    ///< the file that defines it, or the inline source's label
};

/// This thread's "function running now" slot: a thread-local of jaxcc's process-wide reporter,
/// which hands its accessor to the library when it maps it (`jaxcc_crash_attach`, defined by
/// the frame runtime unit). Null in a library mapped without jaxcc's loader: no mark is left.
using FrameSiteSlot = const FrameCrashSite** (*)();
extern __attribute__((visibility("hidden"))) FrameSiteSlot frame_site_slot;

/// Marks this thread with `site` for the scope's life (the user's call), restoring the previous
/// mark however the call ends: one call for the slot's address and two stores.
class FrameSiteScope {
 public:
  explicit FrameSiteScope(const FrameCrashSite* site) noexcept
      : slot_(frame_site_slot != nullptr ? frame_site_slot() : nullptr) {
    if (slot_ != nullptr) {
      previous_ = *slot_;
      *slot_ = site;
    }
  }
  ~FrameSiteScope() {
    if (slot_ != nullptr) *slot_ = previous_;
  }
  FrameSiteScope(const FrameSiteScope&) = delete;
  FrameSiteScope& operator=(const FrameSiteScope&) = delete;

 private:
  const FrameCrashSite** slot_;
  const FrameCrashSite* previous_ = nullptr;
};

}  // namespace jaxcc::detail
