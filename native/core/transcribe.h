// whisper.cpp transcription on a slot thread: one whisper_context (weights) shared by the pool,
// one whisper_state per slot, created on the slot's first transcription and kept.
#pragma once
#include <atomic>

#include "jobs.h"
#include "whisper.h"

// Loads a whisper.cpp ggml model with DTW token timestamps for `heads` ("base", "tiny.en"...;
// "" for none). Returns nullptr when the file cannot be loaded.
whisper_context *load_whisper(const std::string &path, const std::string &heads);

// Loads a whisper.cpp voice activity model (Silero, src/models/silero-vad.ts) for one slot.
// Returns nullptr when the file cannot be loaded.
whisper_vad_context *load_vad(const std::string &path, int n_threads);

// Decodes job.audio and transcribes it; with a `vad`, audio in which it finds no speech is not
// transcribed (whisper invents words in noise and music). Throws InvalidAudio for bad input,
// Cancelled when `abort` turns true, std::runtime_error when whisper fails.
TranscribeResult transcribe(whisper_context *ctx, whisper_state *&state, whisper_vad_context *vad,
                            const TranscribeJob &job, int n_threads, std::atomic<bool> *abort);
