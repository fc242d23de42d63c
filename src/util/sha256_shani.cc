// SHA-256's compression function on the x86 SHA extensions (SHA-NI: sha256rnds2, sha256msg1,
// sha256msg2; Intel since Goldmont and Ice Lake, AMD since Zen). Four to six times the portable
// code's speed, which matters because every warm load hashes the library it is about to dlopen
// (docs/cache.md). Compiled for those instructions function by function (target attributes), so
// the rest of jaxcc keeps the baseline instruction set, and used only when CPUID reports them.
#include "util/sha256_compress.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

namespace jaxcc::sha256_detail {
namespace {

#define JAXCC_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

JAXCC_SHA_TARGET void CompressShaNi(std::uint32_t state[8], const unsigned char* data,
                                    std::size_t blocks) {
  // sha256rnds2 keeps the working variables as two vectors, ABEF and CDGH (highest lane first);
  // the state array is ABCD EFGH.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    // w[g % 4] holds the schedule words 4g..4g+3 for the group of four rounds g.
    __m128i w[4];
    for (int i = 0; i < 4; ++i) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                              byte_swap);
    }
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) {
      if (g >= 4) {
        // W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16], four words at a time:
        // msg1 adds sigma0 to W[t-16], the alignr supplies W[t-7], msg2 adds sigma1.
        __m128i& oldest = w[g % 4];
        const __m128i& previous = w[(g + 3) % 4];
        __m128i t7 = _mm_alignr_epi8(previous, w[(g + 2) % 4], 4);
        oldest = _mm_sha256msg1_epu32(oldest, w[(g + 1) % 4]);
        oldest = _mm_add_epi32(oldest, t7);
        oldest = _mm_sha256msg2_epu32(oldest, previous);
      }
      __m128i wk =
          _mm_add_epi32(w[g % 4], _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // two rounds on the low words
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));  // two on the high
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }

  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), hgfe);
}

// Three CPUID instructions. Each costs about 5 us in a VM, where the hypervisor traps it, so the
// choice is made once per process, when the library is loaded (util/sha256_compress.cc).
bool CpuHasShaExtensions() {
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(1, eax, ebx, ecx, edx);
  const bool ssse3 = (ecx & bit_SSSE3) != 0, sse41 = (ecx & bit_SSE4_1) != 0;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool sha = (ebx & (1u << 29)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29]
  return ssse3 && sse41 && sha;
}

}  // namespace

CompressFn ShaExtensionsCompress() { return CpuHasShaExtensions() ? CompressShaNi : nullptr; }

}  // namespace jaxcc::sha256_detail

#else

namespace jaxcc::sha256_detail {

// Other CPUs (aarch64 included) run the portable code; see decision 98.
CompressFn ShaExtensionsCompress() { return nullptr; }

}  // namespace jaxcc::sha256_detail

#endif
