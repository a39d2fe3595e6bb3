// Exits 0 when ggml's repacked Q4_K kernels give every row of a batch the same bits whatever the
// number of rows: the gemm (rows in fours) against the gemv (the rest), which ggml's calls reach
// through the same -Wl,--wrap as in the addon (native/ggml/gemv_q4k.cpp). Random weights and
// activations; activations quantized as ggml's repack path does (in fours, the rest one by one).
// Built on demand: cmake --build build --target repack-rows-check.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-common.h"
#include "ggml.h"
#include "quants.h"
#include "repack.h"

int main() {
  constexpr int kCols = 1536, kRows = 64, kBlocks = kCols / QK_K;
  std::mt19937 rng(7);
  std::vector<block_q4_Kx8> w(kRows / 8 * kBlocks);
  for (auto &b : w) {
    for (int i = 0; i < 8; ++i) {
      b.d[i] = ggml_fp32_to_fp16(1e-3f + static_cast<float>(rng() % 100) * 1e-5f);
      b.dmin[i] = ggml_fp32_to_fp16(static_cast<float>(rng() % 100) * 1e-5f);
    }
    for (auto &x : b.scales) x = static_cast<uint8_t>(rng());
    for (auto &x : b.qs) x = static_cast<uint8_t>(rng());
  }
  std::normal_distribution<float> normal;
  const size_t row_size = sizeof(block_q8_K) * kBlocks;
  for (int n : {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33}) {
    std::vector<float> x(n * kCols);
    for (float &v : x) v = normal(rng) * std::ldexp(1.f, static_cast<int>(rng() % 10) - 5);
    std::vector<char> q(n * row_size);
    const int fours = n - n % 4;
    for (int i = 0; i < fours; i += 4) ggml_quantize_mat_q8_K_4x8(&x[i * kCols], &q[i * row_size], kCols);
    for (int i = fours; i < n; ++i) quantize_row_q8_K(&x[i * kCols], &q[i * row_size], kCols);
    std::vector<float> batch(n * kRows);
    if (fours > 0) ggml_gemm_q4_K_8x8_q8_K(kCols, batch.data(), kRows, w.data(), q.data(), fours, kRows);
    for (int i = fours; i < n; ++i)
      ggml_gemv_q4_K_8x8_q8_K(kCols, &batch[i * kRows], kRows, w.data(), &q[i * row_size], 1, kRows);
    // Each row alone, as a one-token decode computes it.
    for (int i = 0; i < n; ++i) {
      std::vector<char> one(row_size);
      quantize_row_q8_K(&x[i * kCols], one.data(), kCols);
      std::vector<float> alone(kRows);
      ggml_gemv_q4_K_8x8_q8_K(kCols, alone.data(), kRows, w.data(), one.data(), 1, kRows);
      if (std::memcmp(alone.data(), &batch[i * kRows], sizeof(float) * kRows) != 0) {
        std::printf("row %d of a batch of %d differs from the same row alone\n", i, n);
        return 1;
      }
    }
  }
  std::printf("every row identical alone and in batches of 1 to 33\n");
  return 0;
}
