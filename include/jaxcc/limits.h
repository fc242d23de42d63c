// Limits of the kernel API that the Python layer also enforces (exported by jaxcc._core), kept
// in a header of their own so non-kernel code can read them without the rest of the API.
#pragma once

namespace jaxcc {

/// Largest rank a Tensor can describe (XLA has no limit; brainevent had the same one).
inline constexpr int kMaxDim = 8;

}  // namespace jaxcc
