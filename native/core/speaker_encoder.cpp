// GE2E speaker encoder: see speaker_encoder.h. The hot loops carry target_clones so that the
// addon, built for generic x86-64, still runs them with AVX2/FMA or AVX-512 where the CPU has it.
#include "speaker_encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DM_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define DM_VECTOR_CLONES
#endif

namespace speaker {
namespace {

constexpr int kBinsPadded = (kBins + 15) / 16 * 16;  // DFT table row stride
constexpr int kRowBlock = 4;                         // GEMM rows kept in registers
constexpr int kColBlock = 16;                        // GEMM columns kept in registers

// 8 floats; loads and stores through it may be unaligned.
typedef float v8 __attribute__((vector_size(32), aligned(4)));

// C[m, n0:n0+16] = init[m, n0:n0+16] + A[m, :] . Bt[:, n0:n0+16] for all rows m < M and all
// column blocks. A is M x K (row stride lda), Bt is K x N, C and init have row stride ldc / ldi
// (ldi 0: one init row, e.g. a bias, for every row).
// M must be a multiple of kRowBlock and N of kColBlock (callers pad).
DM_VECTOR_CLONES
void gemm(int M, int N, int K, const float *A, int lda, const float *Bt, const float *init, int ldi, float *C,
          int ldc) {
  for (int n0 = 0; n0 < N; n0 += kColBlock) {
    for (int m0 = 0; m0 < M; m0 += kRowBlock) {
      v8 acc[kRowBlock][2];
      for (int r = 0; r < kRowBlock; r++) {
        const float *in = init + (size_t)(m0 + r) * ldi + n0;
        acc[r][0] = *(const v8 *)in;
        acc[r][1] = *(const v8 *)(in + 8);
      }
      const float *a = A + (size_t)m0 * lda;
      for (int k = 0; k < K; k++) {
        const float *b = Bt + (size_t)k * N + n0;
        const v8 b0 = *(const v8 *)b, b1 = *(const v8 *)(b + 8);
        for (int r = 0; r < kRowBlock; r++) {
          const float s = a[(size_t)r * lda + k];
          acc[r][0] += s * b0;
          acc[r][1] += s * b1;
        }
      }
      for (int r = 0; r < kRowBlock; r++) {
        float *out = C + (size_t)(m0 + r) * ldc + n0;
        *(v8 *)out = acc[r][0];
        *(v8 *)(out + 8) = acc[r][1];
      }
    }
  }
}

// exp(x) to about 2 ulp for |x| < 87, written so that the loops below vectorise (no libm call).
inline float fast_exp(float x) {
  x = std::min(std::max(x, -87.0f), 87.0f);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  const float r = x - n * 0.693145751953125f - n * 1.428606765330187045e-06f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits;
  std::memcpy(&bits, &p, 4);
  bits += static_cast<int32_t>(n) << 23;
  std::memcpy(&p, &bits, 4);
  return p;
}

inline float sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }
inline float tanh_(float x) { return 2.0f / (1.0f + fast_exp(-2.0f * x)) - 1.0f; }

// One LSTM time step for `n` rows given the gate pre-activations g (row stride 4H, PyTorch gate
// order i, f, g, o): c = f*c + i*g, h = o*tanh(c).
DM_VECTOR_CLONES
void lstm_cell(int n, int H, const float *gates, float *c, float *h) {
  for (int row = 0; row < n; row++) {
    const float *g = gates + (size_t)row * 4 * H;
    float *cr = c + (size_t)row * H, *hr = h + (size_t)row * H;
    for (int j = 0; j < H; j++) {
      const float i = sigmoid(g[j]), f = sigmoid(g[H + j]), u = tanh_(g[2 * H + j]), o = sigmoid(g[3 * H + j]);
      cr[j] = f * cr[j] + i * u;
      hr[j] = o * tanh_(cr[j]);
    }
  }
}

// Power spectrum of one windowed frame against the DFT tables ([kFftSize x kBinsPadded]).
DM_VECTOR_CLONES
void power_spectrum(const float *frame, const float *cos_t, const float *sin_t, float *power) {
  float re[kBinsPadded] = {}, im[kBinsPadded] = {};
  for (int n = 0; n < kFftSize; n++) {
    const float x = frame[n];
    if (x == 0.0f) continue;
    const float *c = cos_t + (size_t)n * kBinsPadded, *s = sin_t + (size_t)n * kBinsPadded;
    for (int k = 0; k < kBinsPadded; k++) {
      re[k] += x * c[k];
      im[k] += x * s[k];
    }
  }
  for (int k = 0; k < kBinsPadded; k++) power[k] = re[k] * re[k] + im[k] * im[k];
}

double hz_to_mel(double f) {  // Slaney's scale, as librosa with htk=False
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp, logstep = std::log(6.4) / 27.0;
  return f >= min_log_hz ? min_log_mel + std::log(f / min_log_hz) / logstep : f / f_sp;
}

double mel_to_hz(double m) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp, logstep = std::log(6.4) / 27.0;
  return m >= min_log_mel ? min_log_hz * std::exp(logstep * (m - min_log_mel)) : f_sp * m;
}

// librosa.filters.mel(sr=16000, n_fft=400, n_mels, fmin=0, fmax=8000, htk=False, norm='slaney').
std::vector<float> mel_filterbank(int mels) {
  std::vector<double> edges(mels + 2);
  const double top = hz_to_mel(kSampleRate / 2.0);
  for (int i = 0; i < mels + 2; i++) edges[i] = mel_to_hz(top * i / (mels + 1));
  std::vector<float> fb((size_t)mels * kBins, 0.0f);
  for (int m = 0; m < mels; m++) {
    const double norm = 2.0 / (edges[m + 2] - edges[m]);
    for (int k = 0; k < kBins; k++) {
      const double f = (double)kSampleRate / 2 * k / (kBins - 1);
      const double lower = (f - edges[m]) / (edges[m + 1] - edges[m]);
      const double upper = (edges[m + 2] - f) / (edges[m + 2] - edges[m + 1]);
      fb[(size_t)m * kBins + k] = (float)(std::max(0.0, std::min(lower, upper)) * norm);
    }
  }
  return fb;
}

// Transposes a rows x cols row-major matrix.
std::vector<float> transpose(const float *w, int rows, int cols) {
  std::vector<float> t((size_t)rows * cols);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) t[(size_t)c * rows + r] = w[(size_t)r * cols + c];
  return t;
}

}  // namespace

Encoder::Encoder(const uint8_t *data, size_t size) {
  size_t at = 0;
  auto take = [&](void *dst, size_t bytes) {
    if (size - at < bytes) throw std::runtime_error("speaker model is truncated");
    std::memcpy(dst, data + at, bytes);
    at += bytes;
  };
  char magic[8];
  uint32_t header[6];
  take(magic, sizeof magic);
  take(header, sizeof header);
  if (std::memcmp(magic, "DMSPKENC", 8) != 0 || header[0] != 1) {
    throw std::runtime_error("not a version 1 speaker model (DMSPKENC)");
  }
  dims_ = {(int)header[1], (int)header[2], (int)header[3], (int)header[4]};
  const int H = dims_.hidden, E = dims_.embedding;
  if (dims_.mels < 1 || dims_.mels > 256 || H < 16 || H > 4096 || H % kColBlock || dims_.layers < 1 ||
      dims_.layers > 8 || E < 1 || E > 4096) {
    throw std::runtime_error("implausible speaker model dimensions");
  }
  auto read = [&](size_t n) {
    std::vector<float> v(n);
    take(v.data(), n * sizeof(float));
    return v;
  };
  for (int l = 0; l < dims_.layers; l++) {
    Layer layer;
    layer.in = l == 0 ? dims_.mels : H;
    layer.wih_t = transpose(read((size_t)4 * H * layer.in).data(), 4 * H, layer.in);
    layer.whh_t = transpose(read((size_t)4 * H * H).data(), 4 * H, H);
    layer.bias = read((size_t)4 * H);
    layers_.push_back(std::move(layer));
  }
  linear_t_ = transpose(read((size_t)E * H).data(), E, H);
  linear_b_ = read(E);
  if (at != size) throw std::runtime_error("trailing bytes in speaker model");

  const double pi = 3.14159265358979323846;
  window_.resize(kFftSize);
  for (int n = 0; n < kFftSize; n++) window_[n] = (float)(0.5 - 0.5 * std::cos(2 * pi * n / kFftSize));
  dft_cos_.assign((size_t)kFftSize * kBinsPadded, 0.0f);
  dft_sin_.assign((size_t)kFftSize * kBinsPadded, 0.0f);
  for (int n = 0; n < kFftSize; n++) {
    for (int k = 0; k < kBins; k++) {
      const double angle = 2 * pi * (double)((size_t)k * n % kFftSize) / kFftSize;
      dft_cos_[(size_t)n * kBinsPadded + k] = (float)std::cos(angle);
      dft_sin_[(size_t)n * kBinsPadded + k] = (float)-std::sin(angle);
    }
  }
  mel_fb_ = mel_filterbank(dims_.mels);
}

std::vector<float> Encoder::mel(const float *pcm, size_t samples, float gain, int first, int n) const {
  const float power_gain = gain * gain;  // the mel is a power spectrum
  std::vector<float> out((size_t)n * dims_.mels);
  float frame[kFftSize], power[kBinsPadded];
  for (int i = 0; i < n; i++) {
    // Frame f is centred on sample f * kHop; outside the audio the signal is zero (librosa's
    // center=True with constant padding).
    const long long begin = (long long)(first + i) * kHop - kFftSize / 2;
    for (int j = 0; j < kFftSize; j++) {
      const long long s = begin + j;
      frame[j] = s >= 0 && s < (long long)samples ? pcm[s] * window_[j] : 0.0f;
    }
    power_spectrum(frame, dft_cos_.data(), dft_sin_.data(), power);
    float *row = out.data() + (size_t)i * dims_.mels;
    for (int m = 0; m < dims_.mels; m++) {
      const float *fb = mel_fb_.data() + (size_t)m * kBins;
      float sum = 0;
      for (int k = 0; k < kBins; k++) sum += fb[k] * power[k];
      row[m] = sum * power_gain;
    }
  }
  return out;
}

void Encoder::embed(const float *pcm, size_t samples, float gain, const int32_t *starts, const int32_t *lengths,
                    size_t count, float *out) const {
  if (count == 0) return;
  // The spectrogram span the partials touch is computed once; partials overlap a lot.
  int lo = starts[0], hi = 0;
  for (size_t p = 0; p < count; p++) {
    if (starts[p] < 0 || lengths[p] < 1 || lengths[p] > kMaxPartialFrames) {
      throw std::invalid_argument("partial " + std::to_string(p) + ": start must be >= 0 and length in 1.." +
                                  std::to_string(kMaxPartialFrames));
    }
    lo = std::min(lo, (int)starts[p]);
    hi = std::max(hi, starts[p] + lengths[p]);
  }
  const std::vector<float> spectrogram = mel(pcm, samples, gain, lo, hi - lo);
  const int M = dims_.mels, E = dims_.embedding;
  // Partials of one length run as one batch (the LSTM steps them together); batches are capped
  // to bound the scratch memory (batch x frames x 4H floats of input projection).
  std::map<int, std::vector<size_t>> by_length;
  for (size_t p = 0; p < count; p++) by_length[lengths[p]].push_back(p);
  const size_t max_batch = 32;
  std::vector<float> mels, emb;
  for (const auto &[frames, members] : by_length) {
    for (size_t b0 = 0; b0 < members.size(); b0 += max_batch) {
      const int batch = (int)std::min(max_batch, members.size() - b0);
      mels.resize((size_t)batch * frames * M);
      for (int b = 0; b < batch; b++) {
        const float *src = spectrogram.data() + (size_t)(starts[members[b0 + b]] - lo) * M;
        std::copy(src, src + (size_t)frames * M, mels.data() + (size_t)b * frames * M);
      }
      emb.resize((size_t)batch * E);
      forward(mels.data(), batch, frames, emb.data());
      for (int b = 0; b < batch; b++)
        std::copy(emb.begin() + (size_t)b * E, emb.begin() + (size_t)(b + 1) * E, out + members[b0 + b] * E);
    }
  }
}

void Encoder::forward(const float *mels, int batch, int frames, float *out) const {
  const int H = dims_.hidden, G = 4 * H, E = dims_.embedding;
  const int rows = (batch + kRowBlock - 1) / kRowBlock * kRowBlock;  // padded batch
  std::vector<float> x((size_t)rows * frames * dims_.mels, 0.0f);    // layer input [b][t][in]
  std::copy(mels, mels + (size_t)batch * frames * dims_.mels, x.begin());
  std::vector<float> proj((size_t)rows * frames * G);  // W_ih x + b for every step, [b][t][4H]
  std::vector<float> gates((size_t)rows * G), h((size_t)rows * H), c((size_t)rows * H);
  for (const Layer &layer : layers_) {
    const int steps_rows = rows * frames;  // a multiple of kRowBlock
    gemm(steps_rows, G, layer.in, x.data(), layer.in, layer.wih_t.data(), layer.bias.data(), 0, proj.data(), G);
    std::fill(h.begin(), h.end(), 0.0f);
    std::fill(c.begin(), c.end(), 0.0f);
    std::vector<float> seq((size_t)rows * frames * H);  // this layer's outputs, next layer's input
    for (int t = 0; t < frames; t++) {
      // gates[b] = proj[b][t] + h[b] . W_hh^T
      gemm(rows, G, H, h.data(), H, layer.whh_t.data(), proj.data() + (size_t)t * G, frames * G, gates.data(), G);
      lstm_cell(rows, H, gates.data(), c.data(), h.data());
      for (int b = 0; b < rows; b++)
        std::copy(h.begin() + (size_t)b * H, h.begin() + (size_t)(b + 1) * H,
                  seq.begin() + ((size_t)b * frames + t) * H);
    }
    x.swap(seq);
  }
  // Final hidden state of the last layer -> linear -> ReLU -> L2 normalisation.
  std::vector<float> emb((size_t)rows * E);
  if (E % kColBlock == 0) {
    gemm(rows, E, H, h.data(), H, linear_t_.data(), linear_b_.data(), 0, emb.data(), E);
  } else {
    for (int r = 0; r < rows; r++)
      for (int e = 0; e < E; e++) {
        float s = linear_b_[e];
        for (int k = 0; k < H; k++) s += h[(size_t)r * H + k] * linear_t_[(size_t)k * E + e];
        emb[(size_t)r * E + e] = s;
      }
  }
  for (int b = 0; b < batch; b++) {
    float *e = emb.data() + (size_t)b * E;
    double norm = 0;
    for (int j = 0; j < E; j++) {
      e[j] = std::max(e[j], 0.0f);
      norm += (double)e[j] * e[j];
    }
    const float scale = norm > 0 ? (float)(1.0 / std::sqrt(norm)) : 0.0f;
    for (int j = 0; j < E; j++) out[(size_t)b * E + j] = e[j] * scale;
  }
}

}  // namespace speaker
