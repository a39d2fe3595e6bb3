// In-process audio decoding with FFmpeg's libraries (libavformat, libavcodec, libswresample):
// any container/codec on the allow-list, any rate and channel count, to 16 kHz mono float PCM.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cancelled.h"

// Input the client must fix: `code` is "invalid_audio" or "audio_too_long".
struct InvalidAudio : std::runtime_error {
  std::string code;
  InvalidAudio(std::string c, const std::string &message) : std::runtime_error(message), code(std::move(c)) {}
};

struct DecodedAudio {
  std::vector<float> pcm;  // 16 kHz mono, [-1, 1]
  std::string format;      // demuxer name, e.g. "mp3"
  std::string codec;       // decoder name, e.g. "opus"
};

// Decodes `size` bytes held in memory. Audio longer than `max_seconds` (declared or decoded) is
// refused with "audio_too_long"; empty, unknown, truncated or sample-less input with "invalid_audio".
// Throws Cancelled when `abort` turns true while decoding.
DecodedAudio decode_audio(const uint8_t *data, size_t size, double max_seconds, const std::atomic<bool> *abort);
