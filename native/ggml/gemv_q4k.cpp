// ggml's repacked Q4_K kernels, x86: the gemm (4 or more rows of a batch) and the gemv (each row
// past the last multiple of 4) scale their integer dot products at different points, the gemm
// once per pair of 32-value sub-blocks, the gemv once per 256-value super-block, so a token's
// activations came out with other bits when its batch held another number of tokens (a prefix
// read whole or after a prefix-cache hit, docs/performance.md, "Same request, same answer").
// ggml's calls of the gemv come here (-Wl,--wrap, CMakeLists.txt): ggml's own AVX2 gemv with the
// scaling moved into the sub-block loop, which gives every row the gemm's bits at the gemv's speed
// (native/checks/weight_rows.cpp compares the two, test/build/weight-rows.test.ts runs it). An object of
// the addon itself, not of a static library, so the linker always has it.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace {

constexpr int kQK = 256;  // QK_K: values per super-block

// ggml's block_q8_K and repack.h's block_q4_Kx8, which the addon does not include (private headers).
struct BlockQ8K {
  float d;
  int8_t qs[kQK];
  int16_t bsums[kQK / 16];
};
struct BlockQ4Kx8 {
  uint16_t d[8];
  uint16_t dmin[8];
  uint8_t scales[96];
  uint8_t qs[1024];
};
static_assert(sizeof(BlockQ8K) == 4 + kQK + 2 * kQK / 16, "block_q8_K layout");
static_assert(sizeof(BlockQ4Kx8) == 16 + 16 + 96 + 1024, "block_q4_Kx8 layout");

__attribute__((target("avx2,fma,f16c"))) void gemv(int n, float *__restrict s, const void *__restrict vx,
                                                   const void *__restrict vy, int nr, int nc) {
  const int nb = n / kQK;
  static const uint32_t kmask1 = 0x3f3f3f3f;
  static const uint32_t kmask2 = 0x0f0f0f0f;
  static const uint32_t kmask3 = 0x03030303;
  // Shuffle masks to rearrange delta and scale values to multiply with appropriate scales
  __m128i deltamask = _mm_set_epi8(15, 14, 7, 6, 13, 12, 5, 4, 11, 10, 3, 2, 9, 8, 1, 0);
  __m128i scalemask = _mm_set_epi8(7, 7, 3, 3, 6, 6, 2, 2, 5, 5, 1, 1, 4, 4, 0, 0);
  // Permute mask used for easier vector processing at later stages
  __m256i finalpermutemask = _mm256_set_epi32(7, 5, 3, 1, 6, 4, 2, 0);

  // Mask to extract nibbles from bytes
  const __m256i m4b = _mm256_set1_epi8(0x0F);

  int64_t b_nb = n / kQK;

  const BlockQ4Kx8 *b_ptr_start = (const BlockQ4Kx8 *)vx;
  const BlockQ8K *a_ptr_start = (const BlockQ8K *)vy;

  // Process Q8_K blocks one by one
  for (int64_t y = 0; y < nr; y++) {
    // Pointers to LHS blocks of BlockQ8K format
    const BlockQ8K *a_ptr = a_ptr_start + (y * nb);

    // Take group of eight interleaved block_q4_K structures at each pass of the loop and perform dot product operation
    for (int64_t x = 0; x < nc / 8; x++) {
      // Pointers to RHS blocks
      const BlockQ4Kx8 *b_ptr = b_ptr_start + (x * b_nb);

      // Master FP accumulators
      __m256 acc_row = _mm256_setzero_ps();
      __m256 acc_min_rows = _mm256_setzero_ps();

      for (int64_t b = 0; b < nb; b++) {
        // Load and convert to FP32 scale from BlockQ8K
        const __m256 row_scale_f32 = _mm256_set1_ps((a_ptr[b].d));

        // Load the scale values for the 8 blocks interleaved in BlockQ4Kx8
        // col_scale_f32 rearranged so as to multiply with appropriate quants
        const __m256 col_scale_f32 =
            _mm256_cvtph_ps(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)b_ptr[b].d), deltamask));
        const __m256 col_dmin_f32 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b_ptr[b].dmin));

        const __m256i q8sums = _mm256_loadu_si256((const __m256i *)(a_ptr[b].bsums));
        __m256i q8s =
            _mm256_castsi128_si256(_mm_hadd_epi16(_mm256_castsi256_si128(q8sums), _mm256_extracti128_si256(q8sums, 1)));
        q8s = _mm256_permute2f128_si256(q8s, q8s, 0);

        // Processes two sub blocks from each Q4_K in each iteration
        for (int sb = 0; sb < kQK / 64; sb++) {
          // Load the eight block_q4_K for two sub blocks quantized values interleaved with each other in chunks of
          // eight - B0,B1 ....B6,B7
          const __m256i rhs_raw_vec_0123_0 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + sb * 256));
          const __m256i rhs_raw_vec_4567_0 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 32 + sb * 256));
          const __m256i rhs_raw_vec_0123_1 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 64 + sb * 256));
          const __m256i rhs_raw_vec_4567_1 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 96 + sb * 256));
          const __m256i rhs_raw_vec_0123_2 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 128 + sb * 256));
          const __m256i rhs_raw_vec_4567_2 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 160 + sb * 256));
          const __m256i rhs_raw_vec_0123_3 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 192 + sb * 256));
          const __m256i rhs_raw_vec_4567_3 = _mm256_loadu_si256((const __m256i *)(b_ptr[b].qs + 224 + sb * 256));

          // 4-bit -> 8-bit
          // Values of the first sub block of eight block_q4_K structures for the sb loop
          const __m256i rhs_vec_0123_00 = _mm256_and_si256(rhs_raw_vec_0123_0, m4b);
          const __m256i rhs_vec_4567_00 = _mm256_and_si256(rhs_raw_vec_4567_0, m4b);
          const __m256i rhs_vec_0123_01 = _mm256_and_si256(rhs_raw_vec_0123_1, m4b);
          const __m256i rhs_vec_4567_01 = _mm256_and_si256(rhs_raw_vec_4567_1, m4b);
          const __m256i rhs_vec_0123_02 = _mm256_and_si256(rhs_raw_vec_0123_2, m4b);
          const __m256i rhs_vec_4567_02 = _mm256_and_si256(rhs_raw_vec_4567_2, m4b);
          const __m256i rhs_vec_0123_03 = _mm256_and_si256(rhs_raw_vec_0123_3, m4b);
          const __m256i rhs_vec_4567_03 = _mm256_and_si256(rhs_raw_vec_4567_3, m4b);

          // Values of the second sub block of eight block_q4_K structures when sb = 1
          const __m256i rhs_vec_0123_10 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_0123_0, 4), m4b);
          const __m256i rhs_vec_4567_10 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_4567_0, 4), m4b);
          const __m256i rhs_vec_0123_11 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_0123_1, 4), m4b);
          const __m256i rhs_vec_4567_11 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_4567_1, 4), m4b);
          const __m256i rhs_vec_0123_12 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_0123_2, 4), m4b);
          const __m256i rhs_vec_4567_12 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_4567_2, 4), m4b);
          const __m256i rhs_vec_0123_13 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_0123_3, 4), m4b);
          const __m256i rhs_vec_4567_13 = _mm256_and_si256(_mm256_srli_epi16(rhs_raw_vec_4567_3, 4), m4b);

          uint32_t utmp_0[4], utmp_1[4];

          // Scales and Mins of corresponding sub blocks from different Q8_K structures are stored together
          // The below block is for eg to extract first sub block's scales and mins from different Q4_K structures for
          // the sb loop
          memcpy(utmp_0, b_ptr[b].scales + 24 * sb, 12);
          utmp_0[3] = ((utmp_0[2] >> 4) & kmask2) | (((utmp_0[1] >> 6) & kmask3) << 4);
          const uint32_t uaux_0 = utmp_0[1] & kmask1;
          utmp_0[1] = (utmp_0[2] & kmask2) | (((utmp_0[0] >> 6) & kmask3) << 4);
          utmp_0[2] = uaux_0;
          utmp_0[0] &= kmask1;

          // The below block is for eg to extract second sub block's scales and mins from different Q4_K structures for
          // the sb loop
          memcpy(utmp_1, b_ptr[b].scales + 12 + sb * 24, 12);
          utmp_1[3] = ((utmp_1[2] >> 4) & kmask2) | (((utmp_1[1] >> 6) & kmask3) << 4);
          const uint32_t uaux_1 = utmp_1[1] & kmask1;
          utmp_1[1] = (utmp_1[2] & kmask2) | (((utmp_1[0] >> 6) & kmask3) << 4);
          utmp_1[2] = uaux_1;
          utmp_1[0] &= kmask1;

          // Scales of first sub block in the sb loop
          const __m128i mins_and_scales_0 = _mm_set_epi32(utmp_0[3], utmp_0[2], utmp_0[1], utmp_0[0]);
          __m128i scales_rearrange_0 = _mm_shuffle_epi8(mins_and_scales_0, scalemask);
          __m256i scales_0 = _mm256_cvtepu8_epi16(scales_rearrange_0);

          // Scales of second sub block in the sb loop
          __m128i mins_and_scales_1 = _mm_set_epi32(utmp_1[3], utmp_1[2], utmp_1[1], utmp_1[0]);
          __m128i scales_rearrange_1 = _mm_shuffle_epi8(mins_and_scales_1, scalemask);
          __m256i scales_1 = _mm256_cvtepu8_epi16(scales_rearrange_1);

          // Mins of first and second sub block of Q4_K block are arranged side by side
          __m256i mins_01 = _mm256_cvtepu8_epi16(
              _mm_unpacklo_epi8(_mm_shuffle_epi32(mins_and_scales_0, 78), _mm_shuffle_epi32(mins_and_scales_1, 78)));

          // Load the two sub block values corresponding to sb in BlockQ8K in batches of 16 bytes and replicate the same
          // across 256 bit vector
          __m256i lhs_vec_00 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a_ptr[b].qs + sb * 64)));
          __m256i lhs_vec_01 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a_ptr[b].qs + 16 + sb * 64)));
          __m256i lhs_vec_10 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a_ptr[b].qs + 32 + sb * 64)));
          __m256i lhs_vec_11 = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(a_ptr[b].qs + 48 + sb * 64)));

          lhs_vec_00 = _mm256_permute2f128_si256(lhs_vec_00, lhs_vec_00, 0);
          lhs_vec_01 = _mm256_permute2f128_si256(lhs_vec_01, lhs_vec_01, 0);
          lhs_vec_10 = _mm256_permute2f128_si256(lhs_vec_10, lhs_vec_10, 0);
          lhs_vec_11 = _mm256_permute2f128_si256(lhs_vec_11, lhs_vec_11, 0);

          // Dot product done within 32 bit lanes and accumulated in the same vector
          // First done for first sub block and then for second sub block in each sb
          // B0(0-3) B4(0-3) B1(0-3) B5(0-3) B2(0-3) B6(0-3) B3(0-3) B7(0-3) with A0(0-3)
          // B0(4-7) B4(4-7) B1(4-7) B5(4-7) B2(4-7) B6(4-7) B3(4-7) B7(4-7) with A0(4-7)
          // ...........................................................................
          // B0(28-31) B4(28-31) B1(28-31) B5(28-31) B2(28-31) B6(28-31) B3(28-31) B7(28-31) with A0(28-31)

          __m256i iacc_0 = _mm256_setzero_si256();
          __m256i iacc_1 = _mm256_setzero_si256();

          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_00, _mm256_shuffle_epi32(rhs_vec_4567_00, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_00, 0)));
          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_00, 177), rhs_vec_4567_00, 170),
                                   _mm256_shuffle_epi32(lhs_vec_00, 85)));

          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_01, _mm256_shuffle_epi32(rhs_vec_4567_01, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_00, 170)));
          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_01, 177), rhs_vec_4567_01, 170),
                                   _mm256_shuffle_epi32(lhs_vec_00, 255)));

          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_02, _mm256_shuffle_epi32(rhs_vec_4567_02, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_01, 0)));
          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_02, 177), rhs_vec_4567_02, 170),
                                   _mm256_shuffle_epi32(lhs_vec_01, 85)));

          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_03, _mm256_shuffle_epi32(rhs_vec_4567_03, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_01, 170)));
          iacc_0 = _mm256_add_epi16(
              iacc_0,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_03, 177), rhs_vec_4567_03, 170),
                                   _mm256_shuffle_epi32(lhs_vec_01, 255)));

          iacc_0 = _mm256_madd_epi16(iacc_0, scales_0);

          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_10, _mm256_shuffle_epi32(rhs_vec_4567_10, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_10, 0)));
          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_10, 177), rhs_vec_4567_10, 170),
                                   _mm256_shuffle_epi32(lhs_vec_10, 85)));

          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_11, _mm256_shuffle_epi32(rhs_vec_4567_11, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_10, 170)));
          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_11, 177), rhs_vec_4567_11, 170),
                                   _mm256_shuffle_epi32(lhs_vec_10, 255)));

          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_12, _mm256_shuffle_epi32(rhs_vec_4567_12, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_11, 0)));
          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_12, 177), rhs_vec_4567_12, 170),
                                   _mm256_shuffle_epi32(lhs_vec_11, 85)));

          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(rhs_vec_0123_13, _mm256_shuffle_epi32(rhs_vec_4567_13, 177), 170),
                                   _mm256_shuffle_epi32(lhs_vec_11, 170)));
          iacc_1 = _mm256_add_epi16(
              iacc_1,
              _mm256_maddubs_epi16(_mm256_blend_epi32(_mm256_shuffle_epi32(rhs_vec_0123_13, 177), rhs_vec_4567_13, 170),
                                   _mm256_shuffle_epi32(lhs_vec_11, 255)));

          iacc_1 = _mm256_madd_epi16(iacc_1, scales_1);

          // Accumulate the iacc value for one sb
          __m256i iacc_sb = _mm256_add_epi32(iacc_0, iacc_1);

          // Broadcast the bsums of the two sub blocks  of the iteration of Q8_K across the vector
          // Multiply-Add with corresponding mins of Q4_Kx8 with bsums
          __m256i q8s_sb = _mm256_shuffle_epi32(q8s, 0);
          __m256i iacc_min_sb = _mm256_madd_epi16(q8s_sb, mins_01);
          q8s = _mm256_bsrli_epi128(q8s, 4);

          // Accumulate for the complete block
          // Scaled here, once per pair of sub-blocks as the gemm does, not once per super-block.
          acc_row = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc_sb), _mm256_mul_ps(col_scale_f32, row_scale_f32), acc_row);
          acc_min_rows = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc_min_sb), _mm256_mul_ps(col_dmin_f32, row_scale_f32),
                                         acc_min_rows);
        }

        // Multiply-Add with scale values for the complete super block
      }

      // Accumulated output values permuted so as to be stored in appropriate order post accumulation
      acc_row = _mm256_permutevar8x32_ps(acc_row, finalpermutemask);
      _mm256_storeu_ps(s + (y * nr + x * 8), _mm256_sub_ps(acc_row, acc_min_rows));
    }
  }
}

}  // namespace

extern "C" void __real_ggml_gemv_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr,
                                               int nc);

extern "C" void __wrap_ggml_gemv_q4_K_8x8_q8_K(int n, float *s, size_t bs, const void *vx, const void *vy, int nr,
                                               int nc) {
  // ggml picks this kernel only when built for AVX2 (native/cpu-flags.cmake reads the machine's).
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    gemv(n, s, vx, vy, nr, nc);
  else
    __real_ggml_gemv_q4_K_8x8_q8_K(n, s, bs, vx, vy, nr, nc);
}
#endif
