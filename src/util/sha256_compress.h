// SHA-256's block function, one implementation per instruction set, and the choice among them.
// Internal to util/sha256.cc and its tests, which check every implementation against the others.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jaxcc::sha256_detail {

/// Runs the compression function over `blocks` whole 64-byte blocks at `data`, updating `state`.
using CompressFn = void (*)(std::uint32_t state[8], const unsigned char* data, std::size_t blocks);

/// Plain C++, every platform.
void CompressPortable(std::uint32_t state[8], const unsigned char* data, std::size_t blocks);

/// The x86 SHA extensions (SHA-NI), or nullptr where this CPU or build has none.
CompressFn ShaExtensionsCompress();

/// The fastest implementation this CPU runs, chosen once per process.
CompressFn SelectedCompress();

}  // namespace jaxcc::sha256_detail
