// Standalone check of the speaker encoder against reference vectors made by ref.py (librosa mel +
// numpy LSTM over the same checkpoint). Build and run: see native/speaker/README.md.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "../core/speaker_encoder.h"

// resemblyzer's normalize_volume as a gain: raise to -30 dBFS RMS, never lower.
static float loudness_gain(const std::vector<float> &pcm) {
  double sum = 0;
  for (float x : pcm) sum += (double)x * x;
  if (pcm.empty() || sum == 0) return 1.0f;
  const double change = -30.0 - 10.0 * std::log10(sum / pcm.size());
  return change > 0 ? (float)std::pow(10.0, change / 20.0) : 1.0f;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: harness <model.bin> <vector.ref>...\n");
    return 2;
  }
  std::ifstream model(argv[1], std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(model)), std::istreambuf_iterator<char>());
  speaker::Encoder enc(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  int failures = 0;
  for (int a = 2; a < argc; a++) {
    std::ifstream in(argv[a], std::ios::binary);
    int32_t head[3];
    in.read((char *)head, sizeof head);
    const int samples = head[0], count = head[1], frames = head[2], M = enc.dims().mels, E = enc.dims().embedding;
    std::vector<float> pcm(samples), mel((size_t)frames * M), emb((size_t)count * E);
    std::vector<int32_t> starts(count);
    in.read((char *)pcm.data(), samples * 4);
    in.read((char *)starts.data(), count * 4);
    in.read((char *)mel.data(), mel.size() * 4);
    in.read((char *)emb.data(), emb.size() * 4);
    if (!in) {
      std::fprintf(stderr, "%s: truncated\n", argv[a]);
      return 2;
    }

    const float gain = loudness_gain(pcm);
    const std::vector<float> ours = enc.mel(pcm.data(), samples, gain, 0, frames);
    double worst_rel = 0;
    for (size_t i = 0; i < mel.size(); i++) {
      const double rel = std::fabs(ours[i] - mel[i]) / (std::fabs(mel[i]) + 1e-4);
      worst_rel = std::max(worst_rel, rel);
    }
    std::vector<float> out((size_t)count * E);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> lengths(count, speaker::kPartialFrames);
    enc.embed(pcm.data(), samples, gain, starts.data(), lengths.data(), count, out.data());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double worst_cos = 1, worst_abs = 0;
    for (int p = 0; p < count; p++) {
      double dot = 0;
      for (int j = 0; j < E; j++) {
        dot += (double)out[p * E + j] * emb[p * E + j];
        worst_abs = std::max(worst_abs, (double)std::fabs(out[p * E + j] - emb[p * E + j]));
      }
      worst_cos = std::min(worst_cos, dot);
    }
    const bool ok = worst_rel < 1e-3 && worst_cos > 0.9999 && worst_abs < 2e-3;
    failures += !ok;
    std::printf("%s: mel max rel err %.2e; %d partials: min cosine to reference %.6f, max abs err %.2e; %.1f ms; %s\n",
                argv[a], worst_rel, count, worst_cos, worst_abs, ms, ok ? "OK" : "MISMATCH");
  }
  // Throughput: 32 partials of 160 frames.
  std::vector<float> noise(16000 * 12);
  for (size_t i = 0; i < noise.size(); i++) noise[i] = 0.1f * std::sin(0.01f * i * (1 + i % 7));
  std::vector<int32_t> starts(32);
  for (int p = 0; p < 32; p++) starts[p] = p * 30;
  std::vector<float> out(32 * 256);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> lengths(32, speaker::kPartialFrames);
  enc.embed(noise.data(), noise.size(), loudness_gain(noise), starts.data(), lengths.data(), 32, out.data());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("32 partials x 160 frames: %.1f ms (%.2f ms per partial)\n", ms, ms / 32);
  return failures ? 1 : 0;
}
