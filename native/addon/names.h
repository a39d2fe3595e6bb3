// The property names of the objects the addon makes per job (job_results.cpp; submit()'s and
// transcribe()'s { id, result }), each made once per addon instance, as better-sqlite3 keeps its
// `addon->cs`. N-API before version 10 (Node 20) cannot reference a string itself, so the strings
// are kept in one referenced array and each name is its index there. This is the addon's instance
// data: made in the module's Init, deleted by Node with the environment (which also ends the
// reference). Main thread only.
#pragma once
#include <napi.h>

struct Names {
  // One name: its place in the instance's array.
  class Name {
   public:
    Name(const Napi::ObjectReference &all, uint32_t index) : all_(&all), index_(index) {}
    Napi::Value Value() const { return all_->Value().Get(index_); }

   private:
    const Napi::ObjectReference *all_;
    uint32_t index_;
  };

 private:
  // Declared before the names, so they are made first.
  Napi::ObjectReference all_;
  uint32_t count_ = 0;

 public:
  explicit Names(Napi::Env env)
      : all_(Napi::Persistent(static_cast<Napi::Object>(Napi::Array::New(env)))),
        prompt_tokens(Intern(env, "promptTokens")),
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

  Name prompt_tokens, cached_tokens, decode_ms;                          // every job's stats
  Name logprobs, hidden;                                                 // score
  Name spans, none_logprobs, first_logprobs;                             // spans
  Name start, end, logprob, first_logprob, close_logprob, stop_logprob;  // one span
  Name samples, format, codec, segments, energy, pcm;                    // transcription
  Name no_speech, tokens, text, aligned, p;                              // its segments, tokens
  Name id, result;                                                       // submit()'s answer

 private:
  Name Intern(Napi::Env env, const char *name) {
    all_.Value().Set(count_, Napi::String::New(env, name));
    return Name(all_, count_++);
  }
};
