// CAM++ speaker encoder (3D-Speaker's CAMPPlus, feat_dim 80, embedding 192) in plain C++:
// Kaldi 80-bin log fbank with per-partial mean normalisation, a 2-D convolution front (FCM),
// a TDNN, three densely connected context-aware TDNN blocks, statistics pooling and a linear
// layer with a batch normalisation. No ggml: every layer is a matrix product over [channels x
// frames], written out here; the hot loops carry target_clones so that the addon, built for
// generic x86-64, still runs them with AVX2/FMA or AVX-512 where the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace speaker {

constexpr int kHop = 160;                // 10 ms hop: one fbank frame per 160 samples
constexpr int kPartialFrames = 160;      // 1.6 s, the window diarization embeds
constexpr int kMaxPartialFrames = 1000;  // 10 s: bounds one partial's scratch memory

struct Dims {
  int mels = 0, embedding = 0;
};

// The weights as the converter writes them (src/models/converters/campplus.ts), little-endian:
//   char[8] "DMSPKCAM", u32 version (1), u32 mels (80), u32 embedding (192), u32 reserved x3 (0);
//   then float32 tensors in the order and shapes campplus.cpp reads them (PyTorch layouts,
//   each batch normalisation as scale[C] and shift[C] from its running statistics, eps 1e-5).
class CamPlus {
 public:
  // Parses and checks the bytes of a weights file (not kept); throws std::runtime_error
  // naming the problem.
  CamPlus(const uint8_t *data, size_t size);

  const Dims &dims() const { return dims_; }

  // Embeds partial utterances of `pcm` (16 kHz mono, samples in [-1, 1]). Partial p covers
  // frames [starts[p], starts[p] + lengths[p]); frame f covers samples [f * kHop - 200,
  // f * kHop + 200) (centred on f * kHop); samples outside the audio are zeros. `gain` scales the
  // signal first: the fbank is mean-normalised per partial, so it only matters where a band's
  // energy meets the log floor (FLT_EPSILON); the caller computes it over the whole file so that a
  // quiet file and its levelled copy embed alike. Writes count x embedding floats (each row
  // L2-normalised) to `out`. Throws std::invalid_argument for a negative start or a length
  // outside 1..kMaxPartialFrames. Thread safety: const; any number of threads may embed at once.
  void embed(const float *pcm, size_t samples, float gain, const int32_t *starts, const int32_t *lengths, size_t count,
             float *out) const;

  // The mean-normalised log fbank of frames [first, first + n) of pcm * gain, frame-major (n x 80).
  std::vector<float> fbank(const float *pcm, size_t samples, float gain, int first, int n) const;

  struct Affine {  // a batch normalisation in inference: y = x * scale + shift, per channel
    std::vector<float> scale, shift;
  };
  struct Conv {  // weights [out x in x k...] as PyTorch stores them, no bias unless given
    int out = 0, in = 0, k = 1;
    std::vector<float> w, b;
  };
  struct DenseLayer {
    int in = 0;
    Affine bn1;
    Conv linear1;  // 1x1, in -> 128
    Affine bn2;
    Conv local;  // k 3, 128 -> 32, dilation of the block
    Conv cam1;   // 1x1 with bias, 128 -> 64
    Conv cam2;   // 1x1 with bias, 64 -> 32
  };
  struct Block {
    int dilation = 1;
    std::vector<DenseLayer> layers;
    Affine transit_bn;
    Conv transit;  // 1x1, halves the channels
  };
  struct ResBlock {
    int stride = 1;
    Conv conv1, conv2, shortcut;  // shortcut.out == 0 when it is the identity
    Affine bn1, bn2, shortcut_bn;
  };

 private:
  std::vector<float> forward(const float *feats, int frames) const;  // feats [frames x 80]

  Dims dims_;
  Conv head_conv1_, head_conv2_;
  Affine head_bn1_, head_bn2_;
  std::vector<ResBlock> res_;
  Conv tdnn_;
  Affine tdnn_bn_;
  std::vector<Block> blocks_;
  Affine out_bn_;
  Conv dense_;
  Affine dense_bn_;
  std::vector<float> window_;             // povey, 400
  std::vector<float> dft_cos_, dft_sin_;  // [400 x 257 padded], 512-point DFT of 400 samples
  std::vector<float> mel_fb_;             // [80 x 257], Kaldi's triangles on the mel scale
};

}  // namespace speaker
