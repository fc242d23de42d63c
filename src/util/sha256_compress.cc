// SHA-256's compression function in plain C++ (FIPS 180-4 section 6.2.2), and the choice of the
// fastest implementation this CPU runs.
#include "util/sha256_compress.h"

namespace jaxcc::sha256_detail {
namespace {

inline std::uint32_t Rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline std::uint32_t LoadBigEndian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

void CompressPortable(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    // The message schedule as a 16-word window (W[t] overwrites W[t-16]).
    std::uint32_t w[16];
    for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian32(data + 4 * t);
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      if (t >= 16) {
        std::uint32_t w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
        std::uint32_t sigma0 = Rotr(w15, 7) ^ Rotr(w15, 18) ^ (w15 >> 3);
        std::uint32_t sigma1 = Rotr(w2, 17) ^ Rotr(w2, 19) ^ (w2 >> 10);
        w[t & 15] += sigma0 + w[(t - 7) & 15] + sigma1;
      }
      std::uint32_t big_sigma1 = Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25);
      std::uint32_t choose = (e & f) ^ (~e & g);
      std::uint32_t t1 = h + big_sigma1 + choose + kRound[t] + w[t & 15];
      std::uint32_t big_sigma0 = Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22);
      std::uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      std::uint32_t t2 = big_sigma0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

CompressFn SelectedCompress() {
  static const CompressFn selected = [] {
    CompressFn accelerated = ShaExtensionsCompress();
    return accelerated != nullptr ? accelerated : CompressPortable;
  }();
  return selected;
}

namespace {
// Chosen while the library loads (import jaxcc), as OpenSSL's start-up did, rather than in the
// first hash of a warm load, which would pay the CPUID instructions (decision 98).
[[maybe_unused]] const CompressFn kChosenAtLoad = SelectedCompress();
}  // namespace

}  // namespace jaxcc::sha256_detail
