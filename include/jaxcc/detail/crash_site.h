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
/// Weak: code that includes the kernel headers without a frame runtime (jaxcc's own C++ tests,
/// a user's program) links, and sees no slot (its address is null).
using FrameSiteSlot = const FrameCrashSite** (*)();
extern __attribute__((weak, visibility("hidden"))) FrameSiteSlot frame_site_slot;

/// This thread's slot, or null where there is none.
inline const FrameCrashSite** CurrentSiteSlot() noexcept {
  return &frame_site_slot != nullptr && frame_site_slot != nullptr ? frame_site_slot() : nullptr;
}

/// The mark this thread carries now (null outside a jaxcc function): parallel_for hands it to
/// the pool threads that run the function's chunks.
inline const FrameCrashSite* CurrentSite() noexcept {
  const FrameCrashSite** slot = CurrentSiteSlot();
  return slot != nullptr ? *slot : nullptr;
}

/// Marks this thread with `site` for the scope's life (the user's call), restoring the previous
/// mark however the call ends: one call for the slot's address and two stores.
class FrameSiteScope {
 public:
  explicit FrameSiteScope(const FrameCrashSite* site) noexcept : slot_(CurrentSiteSlot()) {
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
