// GE2E speaker encoder (resemblyzer's pretrained voice encoder) in plain C++: mel front end,
// 3-layer LSTM, linear + ReLU, L2 normalisation. No ggml: the model is 1.4 M parameters and
// its one hot loop (a small GEMM per time step) is written out here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace speaker {

// Front end constants of the pretrained model (resemblyzer hparams.py).
constexpr int kSampleRate = 16000;
constexpr int kFftSize = 400;  // 25 ms window
constexpr int kHop = 160;      // 10 ms hop: one mel frame per 160 samples
constexpr int kBins = kFftSize / 2 + 1;
constexpr int kPartialFrames = 160;      // 1.6 s, the partial utterance the model was trained on
constexpr int kMaxPartialFrames = 1000;  // 10 s: bounds one partial's scratch memory

// The weights as the converter writes them (src/audio/speaker-model.ts), little-endian:
//   char[8] "DMSPKENC", u32 version (1), u32 mels, u32 hidden, u32 layers, u32 embedding,
//   u32 reserved (0); then float32: per layer W_ih [4H x in] and W_hh [4H x H] in PyTorch's
//   row-major layout and gate order (i, f, g, o), bias [4H] = b_ih + b_hh; then the linear
//   layer W [E x H] and b [E].
struct Dims {
  int mels = 0, hidden = 0, layers = 0, embedding = 0;
};

// A speaker encoder: GE2E (Encoder, below) or CAM++ (campplus.h). Both take the same
// partials and write L2-normalised rows.
class Model {
 public:
  virtual ~Model() = default;
  virtual const Dims &dims() const = 0;
  // "ge2e" or "campplus": the caller's clustering constants depend on the embedding space.
  virtual const char *name() const = 0;
  virtual void embed(const float *pcm, size_t samples, float gain, const int32_t *starts, const int32_t *lengths,
                     size_t count, float *out) const = 0;
};

// The encoder a weights file holds, chosen by its magic ("DMSPKENC" GE2E, "DMSPKCAM" CAM++);
// throws std::runtime_error naming the problem.
std::unique_ptr<const Model> load(const uint8_t *data, size_t size);

class Encoder : public Model {
 public:
  // Parses and checks the bytes of a weights file (not kept); throws std::runtime_error
  // naming the problem.
  Encoder(const uint8_t *data, size_t size);

  const Dims &dims() const override { return dims_; }
  const char *name() const override { return "ge2e"; }

  // Embeds partial utterances of `pcm` (16 kHz mono, samples in [-1, 1]).
  // Partial p covers mel frames [starts[p], starts[p] + lengths[p]): frame f is centred on
  // sample f * kHop; frames past the end of the audio see zeros. The model was trained on
  // kPartialFrames; shorter partials work but are noisier. `gain` scales the signal before the
  // mel: resemblyzer raises a file to -30 dBFS RMS, never lowers it (normalize_volume), and the
  // caller computes that gain over the whole file, since partials see only part of it.
  // Writes count x embedding floats (each row L2-normalised) to `out`. Throws
  // std::invalid_argument for a negative start or a length outside 1..kMaxPartialFrames.
  // Thread safety: const; any number of threads may embed with one Encoder at once.
  void embed(const float *pcm, size_t samples, float gain, const int32_t *starts, const int32_t *lengths, size_t count,
             float *out) const override;

  // The 40-channel power mel spectrogram frames [first, first + n) of pcm * gain, frame-major
  // (n x mels). Exposed for the reference comparison.
  std::vector<float> mel(const float *pcm, size_t samples, float gain, int first, int n) const;

 private:
  struct Layer {
    int in = 0;
    std::vector<float> wih_t;  // [in x 4H]: transposed so the GEMM streams rows
    std::vector<float> whh_t;  // [H x 4H]
    std::vector<float> bias;   // [4H]
  };
  void forward(const float *mels, int batch, int frames, float *out) const;

  Dims dims_;
  std::vector<Layer> layers_;
  std::vector<float> linear_t_;           // [H x E]
  std::vector<float> linear_b_;           // [E]
  std::vector<float> window_;             // periodic Hann, kFftSize
  std::vector<float> dft_cos_, dft_sin_;  // [kBins x kFftSize]
  std::vector<float> mel_fb_;             // [mels x kBins], Slaney scale and area normalisation (librosa's default)
};

}  // namespace speaker
