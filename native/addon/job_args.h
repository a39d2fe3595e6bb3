// The job objects of Engine's submit() and transcribe() (src/binding.ts: NativeJob, TranscribeJob)
// read into core/jobs.h's plain structs. Main thread only: what a slot thread later owns holds no
// N-API value. A field that fails its check throws a TypeError (args.h) naming it, in the order the
// fields are read.
#pragma once
#include <napi.h>

#include <cstdint>

#include "jobs.h"

namespace job_args {

// What a job is checked against: the loaded model and its slot pool.
struct Model {
  int32_t n_vocab;      // token ids are 0..n_vocab-1
  int32_t n_layer;      // hidden layers are -1..n_layer-1
  bool has_background;  // the pool has background slots (load's backgroundSlots)
};

// submit(job)'s job, and whether it asked for a background slot.
struct Submission {
  Job job;
  bool background;
};

// A score or span job (`o` is submit()'s argument).
Submission ParseSubmit(Napi::Env env, const Napi::Object &o, const Model &model);
// A transcription job (`o` is transcribe()'s argument); the audio bytes are copied.
TranscribeJob ParseTranscribe(Napi::Env env, const Napi::Object &o);
// An Int32Array of token ids below n_vocab, named job.<key> in its errors.
Tokens TokenArray(Napi::Env env, const Napi::Value &v, const char *key, int32_t n_vocab);

}  // namespace job_args
