// Exits 0 when the addon's Q8_K quantizer (native/core/quantize_q8k.cpp, reached through the same
// -Wl,--wrap as in the addon) writes every block exactly as ggml's reference does; prints the first
// difference otherwise. Built on demand: cmake --build build --target q8k-check.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

extern "C" void quantize_row_q8_K_ref(const float *x, void *y, int64_t k);         // wrapped: the addon's
extern "C" void __real_quantize_row_q8_K_ref(const float *x, void *y, int64_t k);  // ggml's reference

int main() {
  constexpr int kQK = 256, kBlock = 4 + kQK + 2 * kQK / 16, kBlocks = 64;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> x(kBlocks * kQK);
  std::vector<unsigned char> ours(kBlocks * kBlock), ref(kBlocks * kBlock);
  for (int round = 0; round < 2000; ++round) {
    const float scale = std::ldexp(1.f, static_cast<int>(rng() % 40) - 20);
    for (float &v : x) v = normal(rng) * scale;
    const int b = round % kBlocks;
    switch (round % 5) {  // edge cases in one block of each row
      case 1: std::fill(x.begin() + b * kQK, x.begin() + (b + 1) * kQK, 0.f); break;  // all zero
      case 2: x[b * kQK + 3] = -8 * scale, x[b * kQK + 200] = 8 * scale; break;       // tied magnitudes
      case 3:
        for (int j = 0; j < kQK; ++j) x[b * kQK + j] = (j - 128) * 0.5f * scale;
        break;                                         // exact halves
      case 4: x[b * kQK + 255] = 1e6f * scale; break;  // one outlier
    }
    std::memset(ours.data(), 0, ours.size());
    std::memset(ref.data(), 0, ref.size());
    quantize_row_q8_K_ref(x.data(), ours.data(), static_cast<int64_t>(x.size()));
    __real_quantize_row_q8_K_ref(x.data(), ref.data(), static_cast<int64_t>(x.size()));
    for (int i = 0; i < kBlocks; ++i) {
      // Both start zeroed: the reference leaves an all-zero block's sums unwritten.
      if (std::memcmp(&ours[i * kBlock], &ref[i * kBlock], kBlock) != 0) {
        std::printf("round %d block %d differs from the reference\n", round, i);
        return 1;
      }
    }
  }
  std::puts("q8k: 2000 rows of 64 blocks identical to the reference");
  return 0;
}
