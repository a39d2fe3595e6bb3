// Exits 0 when every way this build multiplies the default model's quantized weights (Q4_K, Q6_K)
// gives a row of a batch the bits it gets alone: each buffer type the CPU backend offers for
// weights (ggml's repacked layouts on AVX2/AVX-512, Intel AMX tiles where the build has them, the
// plain buffer), random weights and activations, batches of 1 to 33 rows, through ggml's own graph
// compute on a backend set up as the slots' are (reference switch on, 2 threads). With AMX a lone
// row takes an AVX512-VNNI kernel and a batch the tiles; with repacking, a gemv and a gemm.
// Built on demand: cmake --build build --target weight-rows-check.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

constexpr int kCols = 1536;  // the model's width: whole Q4_K/Q6_K blocks, AMX's 256 alignment
constexpr int kRows = 256;   // output rows: whole AMX tiles (32) and repack groups (8)
constexpr int kMaxBatch = 33;

struct Weights {
  ggml_backend_buffer_type_t buft;
  ggml_type type;
};

// Whether a mul_mat of this weight type would take this buffer type's kernels, asked as llama.cpp
// asks when it places the model's tensors: a weight in an empty buffer of the type, then the device.
bool takes(ggml_backend_dev_t dev, const Weights &w) {
  ggml_init_params params{ggml_tensor_overhead() * 4, nullptr, true};
  ggml_context *ctx = ggml_init(params);
  ggml_tensor *weight = ggml_new_tensor_2d(ctx, w.type, kCols, kRows);
  ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kCols, kMaxBatch);
  ggml_tensor *op = ggml_mul_mat(ctx, weight, x);
  ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(w.buft, 0);
  weight->buffer = empty;
  const bool ok = ggml_backend_dev_supports_op(dev, op);
  ggml_backend_buffer_free(empty);
  ggml_free(ctx);
  return ok;
}

// weight x rows[0..n): n output rows of kRows values.
std::vector<float> multiply(ggml_backend_t backend, const Weights &w, const std::vector<uint8_t> &quantized,
                            const std::vector<float> &rows, int n) {
  ggml_init_params params{ggml_tensor_overhead() * 4 + ggml_graph_overhead(), nullptr, true};
  ggml_context *wctx = ggml_init(params);
  ggml_tensor *weight = ggml_new_tensor_2d(wctx, w.type, kCols, kRows);
  ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, w.buft);
  ggml_backend_tensor_set(weight, quantized.data(), 0, quantized.size());

  ggml_context *ctx = ggml_init(params);
  ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kCols, n);
  ggml_tensor *out = ggml_mul_mat(ctx, weight, x);
  ggml_cgraph *graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, out);
  ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
  ggml_backend_tensor_set(x, rows.data(), 0, sizeof(float) * kCols * n);
  ggml_backend_graph_compute(backend, graph);
  std::vector<float> result(static_cast<size_t>(kRows) * n);
  ggml_backend_tensor_get(out, result.data(), 0, sizeof(float) * result.size());

  ggml_backend_buffer_free(buf);
  ggml_free(ctx);
  ggml_backend_buffer_free(wbuf);
  ggml_free(wctx);
  return result;
}

}  // namespace

int main() {
  ggml_backend_t backend = ggml_backend_cpu_init();
  ggml_backend_cpu_set_n_threads(backend, 2);
  ggml_backend_cpu_set_use_ref(backend, true);
  ggml_backend_dev_t dev = ggml_backend_get_device(backend);
  auto extra_bufts = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
      ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), "ggml_backend_dev_get_extra_bufts"));
  std::vector<ggml_backend_buffer_type_t> bufts;
  for (auto *b = extra_bufts ? extra_bufts(dev) : nullptr; b && *b; ++b) bufts.push_back(*b);
  bufts.push_back(ggml_backend_cpu_buffer_type());

  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> weights(static_cast<size_t>(kCols) * kRows);
  for (float &v : weights) v = normal(rng) * 0.02f;
  std::vector<float> rows(static_cast<size_t>(kCols) * kMaxBatch);
  for (float &v : rows) v = normal(rng) * std::ldexp(1.f, static_cast<int>(rng() % 10) - 5);

  int checked = 0;
  for (ggml_type type : {GGML_TYPE_Q4_K, GGML_TYPE_Q6_K}) {
    std::vector<uint8_t> quantized(ggml_row_size(type, kCols) * kRows);
    ggml_quantize_chunk(type, weights.data(), quantized.data(), 0, kRows, kCols, nullptr);
    for (ggml_backend_buffer_type_t buft : bufts) {
      const Weights w{buft, type};
      if (!takes(dev, w)) continue;
      std::vector<std::vector<float>> alone(kMaxBatch);
      for (int i = 0; i < kMaxBatch; ++i) {
        std::vector<float> one(rows.begin() + static_cast<size_t>(i) * kCols,
                               rows.begin() + static_cast<size_t>(i + 1) * kCols);
        alone[i] = multiply(backend, w, quantized, one, 1);
      }
      for (int n : {2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33}) {
        const std::vector<float> batch = multiply(backend, w, quantized, rows, n);
        for (int i = 0; i < n; ++i) {
          if (std::memcmp(alone[i].data(), &batch[static_cast<size_t>(i) * kRows], sizeof(float) * kRows) != 0) {
            std::printf("%s weights in %s: row %d of a batch of %d differs from the same row alone\n",
                        ggml_type_name(type), ggml_backend_buft_name(buft), i, n);
            return 1;
          }
        }
      }
      std::printf("%s weights in %s: every row identical alone and in batches of 2 to 33\n", ggml_type_name(type),
                  ggml_backend_buft_name(buft));
      ++checked;
    }
  }
  ggml_backend_free(backend);
  return checked > 0 ? 0 : 1;
}
