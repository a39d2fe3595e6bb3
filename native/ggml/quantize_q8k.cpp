// Activations to Q8_K with AVX-512, bit for bit what ggml's reference quantize_row_q8_K_ref writes.
// ggml's x86 build has no vector version of it (arch/x86/quants.c and the AMX kernels both call
// the scalar reference, 4.5% of a yes-no's CPU samples with AMX), so the addon's link routes their
// calls here (-Wl,--wrap, CMakeLists.txt); CPUs without AVX-512 take the reference itself.
// native/checks/q8k.cpp compares the two on random and edge-case rows (test/build/q8k.test.ts).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace {

constexpr int kQK = 256;  // QK_K: values per block

// ggml-common.h's block_q8_K, which the addon does not include (ggml's private header).
struct BlockQ8K {
  float d;
  int8_t qs[kQK];
  int16_t bsums[kQK / 16];
};
static_assert(sizeof(BlockQ8K) == 4 + kQK + 2 * kQK / 16, "block_q8_K layout");

// The reference: the value of largest magnitude (the first, on ties) maps to -127, every value is
// rounded to nearest even, capped at 127, and each 16 values are summed.
__attribute__((target("avx512f"))) void quantize_avx512(const float *x, BlockQ8K *y, int64_t k) {
  for (int64_t b = 0; b < k / kQK; ++b, x += kQK) {
    __m512 vmax = _mm512_setzero_ps();
    for (int j = 0; j < kQK; j += 16) vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_loadu_ps(x + j)));
    const float amax = _mm512_reduce_max_ps(vmax);
    BlockQ8K &out = y[b];
    if (amax == 0.f) {
      std::memset(&out, 0, sizeof out);
      continue;
    }
    float max = 0.f;
    for (int j = 0; j < kQK; j += 16) {
      const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit) {
        max = x[j + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 scale = _mm512_set1_ps(iscale);
    const __m512i cap = _mm512_set1_epi32(127);
    for (int j = 0; j < kQK; j += 16) {
      const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(scale, _mm512_loadu_ps(x + j)),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m512i q = _mm512_min_epi32(_mm512_cvtps_epi32(r), cap);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out.qs + j), _mm512_cvtepi32_epi8(q));
      out.bsums[j / 16] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
    }
    out.d = 1 / iscale;
  }
}

}  // namespace

extern "C" {
void __real_quantize_row_q8_K_ref(const float *x, void *y, int64_t k);

void __wrap_quantize_row_q8_K_ref(const float *x, void *y, int64_t k) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512)
    quantize_avx512(x, static_cast<BlockQ8K *>(y), k);
  else
    __real_quantize_row_q8_K_ref(x, y, k);
}
}
#endif
