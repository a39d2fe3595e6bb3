// CAM++ speaker encoder: see campplus.h. Activations are [channels x frames], frames
// contiguous; every convolution is an im2col copy and one matrix product (gemm below).
#include "campplus.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DM_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define DM_VECTOR_CLONES
#endif

namespace speaker {
namespace {

constexpr int kMels = 80, kEmbedding = 192;
constexpr int kFrame = 400, kFft = 512, kFftBins = kFft / 2 + 1, kFftBinsPadded = 272;
constexpr int kSegment = 100;  // the context-aware layers' segment pooling, frames
constexpr float kEps = 1e-5f;  // batch normalisation

// 8 floats; loads and stores through it may be unaligned.
typedef float v8 __attribute__((vector_size(32), aligned(4)));

// out[o, t] = sum_k W[o, k] * X[k, t] for o < O, t < T; X has row stride ldx, out ldo (0: T).
// Blocks of 4 output rows x 16 frames stay in registers while k runs; the edges go scalar.
DM_VECTOR_CLONES
void gemm(int O, int K, int T, const float *W, const float *X, int ldx, float *out, bool accumulate, int ldo = 0) {
  if (ldo == 0) ldo = T;
  if (!accumulate)
    for (int o = 0; o < O; o++) std::fill(out + (size_t)o * ldo, out + (size_t)o * ldo + T, 0.0f);
  const int T16 = T / 16 * 16, O4 = O / 4 * 4;
  for (int o = 0; o < O4; o += 4) {
    const float *w0 = W + (size_t)o * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
    for (int t = 0; t < T16; t += 16) {
      v8 acc[4][2] = {};
      for (int k = 0; k < K; k++) {
        const float *x = X + (size_t)k * ldx + t;
        const v8 x0 = *(const v8 *)x, x1 = *(const v8 *)(x + 8);
        acc[0][0] += w0[k] * x0;
        acc[0][1] += w0[k] * x1;
        acc[1][0] += w1[k] * x0;
        acc[1][1] += w1[k] * x1;
        acc[2][0] += w2[k] * x0;
        acc[2][1] += w2[k] * x1;
        acc[3][0] += w3[k] * x0;
        acc[3][1] += w3[k] * x1;
      }
      for (int r = 0; r < 4; r++) {
        float *dst = out + (size_t)(o + r) * ldo + t;
        *(v8 *)dst += acc[r][0];
        *(v8 *)(dst + 8) += acc[r][1];
      }
    }
  }
  // The rows past O4 (all frames) and the frames past T16 (rows below O4).
  for (int o = 0; o < O; o++) {
    const int from = o < O4 ? T16 : 0;
    if (from == T) continue;
    float *r = out + (size_t)o * ldo;
    const float *w = W + (size_t)o * K;
    for (int k = 0; k < K; k++) {
      const float a = w[k];
      const float *x = X + (size_t)k * ldx;
      for (int t = from; t < T; t++) r[t] += a * x[t];
    }
  }
}

// x[c, t] = x[c, t] * scale[c] + shift[c], then ReLU when `relu`.
DM_VECTOR_CLONES
void affine(const CamPlus::Affine &bn, float *x, int C, int T, bool relu) {
  for (int c = 0; c < C; c++) {
    float *r = x + (size_t)c * T;
    const float s = bn.scale[c], h = bn.shift[c];
    if (relu)
      for (int t = 0; t < T; t++) r[t] = std::max(r[t] * s + h, 0.0f);
    else
      for (int t = 0; t < T; t++) r[t] = r[t] * s + h;
  }
}

// Power spectrum of one windowed frame against the DFT tables ([kFrame x kFftBinsPadded]).
DM_VECTOR_CLONES
void power_spectrum(const float *frame, const float *cos_t, const float *sin_t, float *power) {
  float re[kFftBinsPadded] = {}, im[kFftBinsPadded] = {};
  for (int n = 0; n < kFrame; n++) {
    const float x = frame[n];
    const float *c = cos_t + (size_t)n * kFftBinsPadded, *s = sin_t + (size_t)n * kFftBinsPadded;
    for (int k = 0; k < kFftBinsPadded; k++) {
      re[k] += x * c[k];
      im[k] += x * s[k];
    }
  }
  for (int k = 0; k < kFftBinsPadded; k++) power[k] = re[k] * re[k] + im[k] * im[k];
}

// 1-D convolution of x [in x T] (zero padding `pad`, stride, dilation) into out [conv.out x To].
void conv1d(const CamPlus::Conv &conv, const float *x, int T, int stride, int pad, int dilation,
            std::vector<float> &col, float *out, int To) {
  const int k = conv.k;
  if (k == 1 && stride == 1 && pad == 0) {
    gemm(conv.out, conv.in, T, conv.w.data(), x, T, out, false);
  } else {
    col.assign((size_t)conv.in * k * To, 0.0f);
    for (int c = 0; c < conv.in; c++)
      for (int j = 0; j < k; j++) {
        float *dst = col.data() + ((size_t)c * k + j) * To;
        const float *src = x + (size_t)c * T;
        for (int t = 0; t < To; t++) {
          const int s = t * stride + j * dilation - pad;
          if (s >= 0 && s < T) dst[t] = src[s];
        }
      }
    gemm(conv.out, conv.in * k, To, conv.w.data(), col.data(), To, out, false);
  }
  if (!conv.b.empty())
    for (int o = 0; o < conv.out; o++)
      for (int t = 0; t < To; t++) out[(size_t)o * To + t] += conv.b[o];
}

// 3x3 convolution, padding 1, stride (stride, 1), of x [in x H x W] into out [conv.out x Ho x W].
// One output row at a time: its im2col block (in x 9 x W) stays in cache.
void conv2d(const CamPlus::Conv &conv, const float *x, int H, int W, int stride, std::vector<float> &col, float *out,
            int Ho) {
  const int k = conv.k, pad = k / 2;
  col.resize((size_t)conv.in * k * k * W);
  for (int h = 0; h < Ho; h++) {
    for (int c = 0; c < conv.in; c++)
      for (int i = 0; i < k; i++) {
        const int sh = h * stride + i - pad;
        for (int j = 0; j < k; j++) {
          float *d = col.data() + (((size_t)c * k + i) * k + j) * W;
          if (sh < 0 || sh >= H) {
            std::fill(d, d + W, 0.0f);
            continue;
          }
          const float *src = x + ((size_t)c * H + sh) * W;
          for (int w = 0; w < W; w++) {
            const int sw = w + j - pad;
            d[w] = sw >= 0 && sw < W ? src[sw] : 0.0f;
          }
        }
      }
    gemm(conv.out, conv.in * k * k, W, conv.w.data(), col.data(), W, out + (size_t)h * W, false, Ho * W);
  }
}

}  // namespace

CamPlus::CamPlus(const uint8_t *data, size_t size) {
  size_t at = 0;
  auto take = [&](void *dst, size_t bytes) {
    if (size - at < bytes) throw std::runtime_error("CAM++ model is truncated");
    std::memcpy(dst, data + at, bytes);
    at += bytes;
  };
  char magic[8];
  uint32_t header[6];
  take(magic, sizeof magic);
  take(header, sizeof header);
  if (std::memcmp(magic, "DMSPKCAM", 8) != 0 || header[0] != 1)
    throw std::runtime_error("not a version 1 CAM++ speaker model (DMSPKCAM)");
  if (header[1] != kMels || header[2] != kEmbedding)
    throw std::runtime_error("CAM++ model: expected 80 mels and 192-dimensional embeddings");
  dims_ = {kMels, kEmbedding};
  auto floats = [&](size_t n) {
    std::vector<float> v(n);
    take(v.data(), n * sizeof(float));
    return v;
  };
  auto conv = [&](int out, int in, int k, int taps, bool bias) {
    Conv c{out, in, k, floats((size_t)out * in * taps), {}};
    if (bias) c.b = floats(out);
    return c;
  };
  auto bn = [&](int C) {
    Affine a;
    a.scale = floats(C);
    a.shift = floats(C);
    return a;
  };
  head_conv1_ = conv(32, 1, 3, 9, false);
  head_bn1_ = bn(32);
  for (int i = 0; i < 4; i++) {
    ResBlock r;
    r.stride = i % 2 == 0 ? 2 : 1;
    r.conv1 = conv(32, 32, 3, 9, false);
    r.bn1 = bn(32);
    r.conv2 = conv(32, 32, 3, 9, false);
    r.bn2 = bn(32);
    if (r.stride != 1) {
      r.shortcut = conv(32, 32, 1, 1, false);
      r.shortcut_bn = bn(32);
    }
    res_.push_back(std::move(r));
  }
  head_conv2_ = conv(32, 32, 3, 9, false);
  head_bn2_ = bn(32);
  tdnn_ = conv(128, 320, 5, 5, false);
  tdnn_bn_ = bn(128);
  int channels = 128;
  const int config[3][2] = {{12, 1}, {24, 2}, {16, 2}};  // layers, dilation; kernel 3, growth 32
  for (const auto &[count, dilation] : config) {
    Block b;
    b.dilation = dilation;
    for (int l = 0; l < count; l++) {
      DenseLayer d;
      d.in = channels + 32 * l;
      d.bn1 = bn(d.in);
      d.linear1 = conv(128, d.in, 1, 1, false);
      d.bn2 = bn(128);
      d.local = conv(32, 128, 3, 3, false);
      d.cam1 = conv(64, 128, 1, 1, true);
      d.cam2 = conv(32, 64, 1, 1, true);
      b.layers.push_back(std::move(d));
    }
    channels += 32 * count;
    b.transit_bn = bn(channels);
    b.transit = conv(channels / 2, channels, 1, 1, false);
    channels /= 2;
    blocks_.push_back(std::move(b));
  }
  out_bn_ = bn(channels);
  dense_ = conv(kEmbedding, channels * 2, 1, 1, false);
  dense_bn_ = bn(kEmbedding);
  if (at != size) throw std::runtime_error("trailing bytes in CAM++ model");

  const double pi = 3.14159265358979323846;
  window_.resize(kFrame);
  for (int n = 0; n < kFrame; n++) window_[n] = (float)std::pow(0.5 - 0.5 * std::cos(2 * pi * n / (kFrame - 1)), 0.85);
  dft_cos_.assign((size_t)kFrame * kFftBinsPadded, 0.0f);
  dft_sin_.assign((size_t)kFrame * kFftBinsPadded, 0.0f);
  for (int n = 0; n < kFrame; n++)
    for (int k = 0; k < kFftBins; k++) {
      const double angle = 2 * pi * (double)((size_t)k * n % kFft) / kFft;
      dft_cos_[(size_t)n * kFftBinsPadded + k] = (float)std::cos(angle);
      dft_sin_[(size_t)n * kFftBinsPadded + k] = (float)-std::sin(angle);
    }
  // Kaldi's mel banks: 80 triangles evenly spaced on 1127 ln(1 + f / 700) from 20 Hz to 8 kHz,
  // over the FFT bins below Nyquist.
  auto mel = [](double f) { return 1127.0 * std::log(1.0 + f / 700.0); };
  const double lo = mel(20.0), hi = mel(8000.0), step = (hi - lo) / (kMels + 1);
  mel_fb_.assign((size_t)kMels * kFftBins, 0.0f);
  for (int m = 0; m < kMels; m++) {
    const double left = lo + m * step, centre = left + step, right = centre + step;
    for (int k = 0; k < kFft / 2; k++) {
      const double f = mel(16000.0 * k / kFft);
      const double w = std::min((f - left) / (centre - left), (right - f) / (right - centre));
      if (w > 0) mel_fb_[(size_t)m * kFftBins + k] = (float)w;
    }
  }
}

std::vector<float> CamPlus::fbank(const float *pcm, size_t samples, float gain, int first, int n) const {
  std::vector<float> out((size_t)n * kMels);
  float frame[kFrame], power[kFftBinsPadded];
  for (int i = 0; i < n; i++) {
    const long long begin = (long long)(first + i) * kHop - kFrame / 2;
    double mean = 0;
    for (int j = 0; j < kFrame; j++) {
      const long long s = begin + j;
      frame[j] = s >= 0 && s < (long long)samples ? pcm[s] * gain : 0.0f;
      mean += frame[j];
    }
    mean /= kFrame;
    for (int j = 0; j < kFrame; j++) frame[j] -= (float)mean;               // remove the DC offset
    for (int j = kFrame - 1; j > 0; j--) frame[j] -= 0.97f * frame[j - 1];  // pre-emphasis
    frame[0] -= 0.97f * frame[0];
    for (int j = 0; j < kFrame; j++) frame[j] *= window_[j];
    power_spectrum(frame, dft_cos_.data(), dft_sin_.data(), power);
    float *row = out.data() + (size_t)i * kMels;
    for (int m = 0; m < kMels; m++) {
      const float *fb = mel_fb_.data() + (size_t)m * kFftBins;
      float sum = 0;
      for (int k = 0; k < kFftBins; k++) sum += fb[k] * power[k];
      row[m] = std::log(std::max(sum, FLT_EPSILON));
    }
  }
  for (int m = 0; m < kMels; m++) {  // mean normalisation over the partial
    double mean = 0;
    for (int i = 0; i < n; i++) mean += out[(size_t)i * kMels + m];
    mean /= std::max(n, 1);
    for (int i = 0; i < n; i++) out[(size_t)i * kMels + m] -= (float)mean;
  }
  return out;
}

void CamPlus::embed(const float *pcm, size_t samples, float gain, const int32_t *starts, const int32_t *lengths,
                    size_t count, float *out) const {
  for (size_t p = 0; p < count; p++) {
    if (starts[p] < 0 || lengths[p] < 1 || lengths[p] > kMaxPartialFrames) {
      throw std::invalid_argument("partial " + std::to_string(p) + ": start must be >= 0 and length in 1.." +
                                  std::to_string(kMaxPartialFrames));
    }
  }
  for (size_t p = 0; p < count; p++) {
    const std::vector<float> feats = fbank(pcm, samples, gain, starts[p], lengths[p]);
    std::vector<float> e = forward(feats.data(), lengths[p]);
    double norm = 0;
    for (float v : e) norm += (double)v * v;
    const float scale = norm > 0 ? (float)(1.0 / std::sqrt(norm)) : 0.0f;
    for (int j = 0; j < kEmbedding; j++) out[p * kEmbedding + j] = e[j] * scale;
  }
}

std::vector<float> CamPlus::forward(const float *feats, int T) const {
  std::vector<float> col, a, b, c;
  // FCM: [1 x 80 x T] -> [32 x 10 x T].
  a.resize((size_t)kMels * T);
  for (int t = 0; t < T; t++)
    for (int m = 0; m < kMels; m++) a[(size_t)m * T + t] = feats[(size_t)t * kMels + m];
  int H = kMels;
  b.resize((size_t)32 * H * T);
  conv2d(head_conv1_, a.data(), H, T, 1, col, b.data(), H);
  affine(head_bn1_, b.data(), 32, H * T, true);
  for (const ResBlock &r : res_) {
    const int Ho = (H - 1) / r.stride + 1;
    a.resize((size_t)32 * Ho * T);
    conv2d(r.conv1, b.data(), H, T, r.stride, col, a.data(), Ho);
    affine(r.bn1, a.data(), 32, Ho * T, true);
    c.resize((size_t)32 * Ho * T);
    conv2d(r.conv2, a.data(), Ho, T, 1, col, c.data(), Ho);
    affine(r.bn2, c.data(), 32, Ho * T, false);
    if (r.shortcut.out) {  // 1x1 convolution with the stride, then its batch normalisation
      a.assign((size_t)32 * Ho * T, 0.0f);
      col.resize((size_t)32 * Ho * T);
      for (int ch = 0; ch < 32; ch++)
        for (int h = 0; h < Ho; h++)
          std::copy_n(b.data() + ((size_t)ch * H + h * r.stride) * T, T, col.data() + ((size_t)ch * Ho + h) * T);
      gemm(32, 32, Ho * T, r.shortcut.w.data(), col.data(), Ho * T, a.data(), false);
      affine(r.shortcut_bn, a.data(), 32, Ho * T, false);
    } else {
      a.assign(b.begin(), b.end());
    }
    for (size_t i = 0; i < c.size(); i++) c[i] = std::max(c[i] + a[i], 0.0f);
    b.swap(c);
    H = Ho;
  }
  {
    const int Ho = (H - 1) / 2 + 1;
    a.resize((size_t)32 * Ho * T);
    conv2d(head_conv2_, b.data(), H, T, 2, col, a.data(), Ho);
    affine(head_bn2_, a.data(), 32, Ho * T, true);
    H = Ho;  // a is now [320 x T], channel c * 10 + h
  }
  // TDNN: kernel 5, stride 2, padding 2.
  const int T2 = (T - 1) / 2 + 1;
  int channels = blocks_.empty() ? 0 : blocks_.back().transit.in;  // the widest concatenation
  for (const Block &blk : blocks_) channels = std::max(channels, blk.transit.in);
  std::vector<float> x((size_t)channels * T2);  // the block's concatenated features
  conv1d(tdnn_, a.data(), T, 2, 2, 1, col, x.data(), T2);
  affine(tdnn_bn_, x.data(), 128, T2, true);
  int have = 128;
  std::vector<float> h((size_t)128 * T2), y((size_t)32 * T2);
  const int segments = (T2 + kSegment - 1) / kSegment;
  std::vector<float> context((size_t)128 * segments), hidden((size_t)64 * segments), gate((size_t)32 * segments);
  for (const Block &blk : blocks_) {
    for (const DenseLayer &d : blk.layers) {
      // h = relu(bn2(linear1(relu(bn1(x)))))
      a.assign(x.begin(), x.begin() + (size_t)d.in * T2);
      affine(d.bn1, a.data(), d.in, T2, true);
      gemm(128, d.in, T2, d.linear1.w.data(), a.data(), T2, h.data(), false);
      affine(d.bn2, h.data(), 128, T2, true);
      conv1d(d.local, h.data(), T2, 1, blk.dilation, blk.dilation, col, y.data(), T2);
      // Context per segment of 100 frames: the mean of all frames plus the segment's mean.
      for (int ch = 0; ch < 128; ch++) {
        const float *r = h.data() + (size_t)ch * T2;
        double all = 0;
        for (int t = 0; t < T2; t++) all += r[t];
        all /= T2;
        for (int s = 0; s < segments; s++) {
          const int t0 = s * kSegment, t1 = std::min(T2, t0 + kSegment);
          double sum = 0;
          for (int t = t0; t < t1; t++) sum += r[t];
          context[(size_t)ch * segments + s] = (float)(all + sum / (t1 - t0));
        }
      }
      gemm(64, 128, segments, d.cam1.w.data(), context.data(), segments, hidden.data(), false);
      for (int o = 0; o < 64; o++)
        for (int s = 0; s < segments; s++)
          hidden[(size_t)o * segments + s] = std::max(hidden[(size_t)o * segments + s] + d.cam1.b[o], 0.0f);
      gemm(32, 64, segments, d.cam2.w.data(), hidden.data(), segments, gate.data(), false);
      for (int o = 0; o < 32; o++)
        for (int s = 0; s < segments; s++) {
          const float g = 1.0f / (1.0f + std::exp(-(gate[(size_t)o * segments + s] + d.cam2.b[o])));
          const int t0 = s * kSegment, t1 = std::min(T2, t0 + kSegment);
          float *dst = x.data() + (size_t)(have + o) * T2;
          const float *src = y.data() + (size_t)o * T2;
          for (int t = t0; t < t1; t++) dst[t] = src[t] * g;
        }
      have += 32;
    }
    a.assign(x.begin(), x.begin() + (size_t)have * T2);
    affine(blk.transit_bn, a.data(), have, T2, true);
    gemm(blk.transit.out, have, T2, blk.transit.w.data(), a.data(), T2, x.data(), false);
    have = blk.transit.out;
  }
  affine(out_bn_, x.data(), have, T2, true);
  // Statistics pooling: mean and unbiased standard deviation of every channel.
  std::vector<float> stats((size_t)2 * have);
  for (int ch = 0; ch < have; ch++) {
    const float *r = x.data() + (size_t)ch * T2;
    double sum = 0, sq = 0;
    for (int t = 0; t < T2; t++) sum += r[t];
    const double mean = sum / T2;
    for (int t = 0; t < T2; t++) sq += (r[t] - mean) * (r[t] - mean);
    stats[ch] = (float)mean;
    stats[have + ch] = T2 > 1 ? (float)std::sqrt(sq / (T2 - 1)) : 1e-2f;
  }
  std::vector<float> e(kEmbedding);
  gemm(kEmbedding, 2 * have, 1, dense_.w.data(), stats.data(), 1, e.data(), false);
  affine(dense_bn_, e.data(), kEmbedding, 1, false);  // no ReLU: 3D-Speaker's 'batchnorm_'
  return e;
}

}  // namespace speaker
