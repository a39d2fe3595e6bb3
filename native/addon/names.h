// The property names of the objects the addon makes per job (job_results.cpp; submit()'s and
// transcribe()'s { id, result }), each made once per addon instance and kept referenced, as
// better-sqlite3 keeps its `addon->cs`. This is the addon's instance data: made in the module's
// Init, deleted by Node with the environment (which also ends the references). Main thread only.
#pragma once
#include <napi.h>

struct Names {
  explicit Names(Napi::Env env)
      : prompt_tokens(Intern(env, "promptTokens")),
        cached_tokens(Intern(env, "cachedTokens")),
        decode_ms(Intern(env, "decodeMs")),
        logprobs(Intern(env, "logprobs")),
        hidden(Intern(env, "hidden")),
        spans(Intern(env, "spans")),
        none_logprobs(Intern(env, "noneLogprobs")),
        first_logprobs(Intern(env, "firstLogprobs")),
        start(Intern(env, "start")),
        end(Intern(env, "end")),
        logprob(Intern(env, "logprob")),
        first_logprob(Intern(env, "firstLogprob")),
        close_logprob(Intern(env, "closeLogprob")),
        stop_logprob(Intern(env, "stopLogprob")),
        samples(Intern(env, "samples")),
        format(Intern(env, "format")),
        codec(Intern(env, "codec")),
        segments(Intern(env, "segments")),
        energy(Intern(env, "energy")),
        pcm(Intern(env, "pcm")),
        no_speech(Intern(env, "noSpeech")),
        tokens(Intern(env, "tokens")),
        text(Intern(env, "text")),
        aligned(Intern(env, "aligned")),
        p(Intern(env, "p")),
        id(Intern(env, "id")),
        result(Intern(env, "result")) {}

  // The instance's names (set by Init before any class is exported).
  static const Names &Of(Napi::Env env) { return *env.GetInstanceData<Names>(); }

  using Name = Napi::Reference<Napi::String>;
  Name prompt_tokens, cached_tokens, decode_ms;                          // every job's stats
  Name logprobs, hidden;                                                 // score
  Name spans, none_logprobs, first_logprobs;                             // spans
  Name start, end, logprob, first_logprob, close_logprob, stop_logprob;  // one span
  Name samples, format, codec, segments, energy, pcm;                    // transcription
  Name no_speech, tokens, text, aligned, p;                              // its segments, tokens
  Name id, result;                                                       // submit()'s answer

 private:
  static Name Intern(Napi::Env env, const char *name) { return Napi::Persistent(Napi::String::New(env, name)); }
};
