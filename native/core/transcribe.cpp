#include "transcribe.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "audio_decode.h"

namespace {

const std::map<std::string, whisper_alignment_heads_preset> kHeads = {
    {"tiny.en", WHISPER_AHEADS_TINY_EN}, {"tiny", WHISPER_AHEADS_TINY},         {"base.en", WHISPER_AHEADS_BASE_EN},
    {"base", WHISPER_AHEADS_BASE},       {"small.en", WHISPER_AHEADS_SMALL_EN}, {"small", WHISPER_AHEADS_SMALL},
};

constexpr int kFrame = 160;            // 10 ms at 16 kHz
constexpr float kSilentPeak = 0.003f;  // about -50 dBFS: nothing to transcribe below this

std::vector<float> frame_energy(const std::vector<float> &pcm) {
  std::vector<float> rms((pcm.size() + kFrame - 1) / kFrame);
  for (size_t f = 0; f < rms.size(); ++f) {
    size_t from = f * kFrame, to = std::min(pcm.size(), from + kFrame);
    double sum = 0;
    for (size_t i = from; i < to; ++i) sum += static_cast<double>(pcm[i]) * pcm[i];
    rms[f] = static_cast<float>(std::sqrt(sum / static_cast<double>(to - from)));
  }
  return rms;
}

// Whether the voice activity model finds any speech (whisper.cpp's default thresholds: speech
// probability 0.5 for at least 250 ms).
bool has_speech(whisper_vad_context *vad, const std::vector<float> &pcm) {
  whisper_vad_segments *segments =
      whisper_vad_segments_from_samples(vad, whisper_vad_default_params(), pcm.data(), static_cast<int>(pcm.size()));
  if (segments == nullptr) throw std::runtime_error("voice activity detection failed");
  const bool any = whisper_vad_segments_n_segments(segments) > 0;
  whisper_vad_free_segments(segments);
  return any;
}

}  // namespace

whisper_context *load_whisper(const std::string &path, const std::string &heads) {
  whisper_context_params cp = whisper_context_default_params();
  cp.use_gpu = false;
  auto preset = kHeads.find(heads);
  if (preset != kHeads.end()) {
    // Word times come from cross-attention alignment (DTW); whisper.cpp runs it without flash attention.
    cp.flash_attn = false;
    cp.dtw_token_timestamps = true;
    cp.dtw_aheads_preset = preset->second;
  }
  return whisper_init_from_file_with_params_no_state(path.c_str(), cp);
}

whisper_vad_context *load_vad(const std::string &path, int n_threads) {
  whisper_vad_context_params p = whisper_vad_default_context_params();
  p.n_threads = n_threads;
  p.use_gpu = false;
  return whisper_vad_init_from_file_with_params(path.c_str(), p);
}

TranscribeResult transcribe(whisper_context *ctx, whisper_state *&state, whisper_vad_context *vad,
                            const TranscribeJob &job, int n_threads, std::atomic<bool> *abort) {
  DecodedAudio audio = decode_audio(job.audio.data(), job.audio.size(), job.max_seconds, abort);
  TranscribeResult r;
  r.samples = static_cast<int64_t>(audio.pcm.size());
  r.format = audio.format;
  r.codec = audio.codec;
  r.energy = frame_energy(audio.pcm);
  float peak = 0;
  for (float x : audio.pcm) peak = std::max(peak, std::fabs(x));
  // Digital silence, or no speech at all: whisper would only invent a "you" or a "Thank you."
  if (peak < kSilentPeak || (vad != nullptr && !has_speech(vad, audio.pcm))) {
    if (job.want_pcm) r.pcm = std::move(audio.pcm);
    return r;
  }
  if (state == nullptr) state = whisper_init_state(ctx);
  if (state == nullptr) throw std::runtime_error("could not create a whisper state");

  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  p.n_threads = n_threads;
  p.language = job.language.c_str();
  p.detect_language = false;
  p.translate = false;
  p.print_progress = p.print_realtime = p.print_special = p.print_timestamps = false;
  p.token_timestamps = true;
  p.suppress_nst = true;  // no "[music]"-style tokens in a transcript
  // One greedy pass per window. The temperature fallback re-decodes a window that looks wrong at
  // up to five more temperatures: on damaged or noisy audio that took minutes on 2 cores.
  p.temperature_inc = 0.0f;
  p.abort_callback = [](void *data) { return static_cast<std::atomic<bool> *>(data)->load(std::memory_order_relaxed); };
  p.abort_callback_user_data = abort;
  p.encoder_begin_callback = [](whisper_context *, whisper_state *, void *data) {
    return !static_cast<std::atomic<bool> *>(data)->load(std::memory_order_relaxed);
  };
  p.encoder_begin_callback_user_data = abort;
  int rc = whisper_full_with_state(ctx, state, p, audio.pcm.data(), static_cast<int>(audio.pcm.size()));
  if (abort->load()) throw Cancelled();
  if (rc != 0) throw std::runtime_error("whisper_full failed with code " + std::to_string(rc));

  const whisper_token eot = whisper_token_eot(ctx);
  const int n_segments = whisper_full_n_segments_from_state(state);
  for (int s = 0; s < n_segments; ++s) {
    TranscribedSegment seg;
    seg.t0 = whisper_full_get_segment_t0_from_state(state, s) / 100.0;
    seg.t1 = whisper_full_get_segment_t1_from_state(state, s) / 100.0;
    seg.no_speech = whisper_full_get_segment_no_speech_prob_from_state(state, s);
    const int n_tokens = whisper_full_n_tokens_from_state(state, s);
    for (int t = 0; t < n_tokens; ++t) {
      whisper_token_data d = whisper_full_get_token_data_from_state(state, s, t);
      if (d.id >= eot) continue;  // special and timestamp tokens
      seg.tokens.push_back({whisper_full_get_token_text_from_state(ctx, state, s, t), d.t0 / 100.0, d.t1 / 100.0,
                            d.t_dtw >= 0 ? d.t_dtw / 100.0 : -1.0, d.p});
    }
    r.segments.push_back(std::move(seg));
  }
  if (job.want_pcm) r.pcm = std::move(audio.pcm);
  return r;
}
