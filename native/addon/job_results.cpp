#include "job_results.h"

#include <variant>

#include "typed_arrays.h"

namespace {

Napi::Object StatsToJs(Napi::Env env, const JobStats &r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("promptTokens", r.prompt_tokens);
  out.Set("cachedTokens", r.cached_tokens);
  out.Set("decodeMs", r.decode_ms);
  return out;
}

Napi::Value ToJs(Napi::Env env, const ScoreResult &r) {
  Napi::Object out = StatsToJs(env, r);
  out.Set("logprobs", TypedArrayFrom(env, r.logprobs));
  if (!r.hidden.empty()) out.Set("hidden", TypedArrayFrom(env, r.hidden));  // the job asked
  return out;
}

Napi::Value ToJs(Napi::Env env, const SpanResult &r) {
  Napi::Object out = StatsToJs(env, r);
  Napi::Array branches = Napi::Array::New(env, r.spans.size());
  for (size_t b = 0; b < r.spans.size(); ++b) {
    Napi::Array list = Napi::Array::New(env, r.spans[b].size());
    for (size_t i = 0; i < r.spans[b].size(); ++i) {
      Napi::Object span = Napi::Object::New(env);
      span.Set("start", r.spans[b][i].start);
      span.Set("end", r.spans[b][i].end);
      span.Set("logprob", r.spans[b][i].logprob);
      span.Set("firstLogprob", r.spans[b][i].first_logprob);
      span.Set("closeLogprob", r.spans[b][i].close_logprob);
      span.Set("stopLogprob", r.spans[b][i].stop_logprob);
      list.Set(i, span);
    }
    branches.Set(b, list);
  }
  out.Set("spans", branches);
  out.Set("noneLogprobs", TypedArrayFrom(env, r.none_logprob));
  out.Set("firstLogprobs", TypedArrayFrom(env, r.first_logprobs));
  return out;
}

Napi::Value ToJs(Napi::Env env, const TranscribeResult &r) {
  Napi::Object out = StatsToJs(env, r);
  out.Set("samples", static_cast<double>(r.samples));
  out.Set("format", r.format);
  out.Set("codec", r.codec);
  Napi::Array segments = Napi::Array::New(env, r.segments.size());
  for (size_t s = 0; s < r.segments.size(); ++s) {
    const TranscribedSegment &seg = r.segments[s];
    Napi::Object o = Napi::Object::New(env);
    o.Set("start", seg.t0);
    o.Set("end", seg.t1);
    o.Set("noSpeech", seg.no_speech);
    Napi::Array tokens = Napi::Array::New(env, seg.tokens.size());
    for (size_t t = 0; t < seg.tokens.size(); ++t) {
      const TranscribedToken &tok = seg.tokens[t];
      Napi::Object to = Napi::Object::New(env);
      to.Set("text", tok.text);
      to.Set("start", tok.t0);
      to.Set("end", tok.t1);
      to.Set("aligned", tok.t_dtw);
      to.Set("p", tok.p);
      tokens.Set(t, to);
    }
    o.Set("tokens", tokens);
    segments.Set(s, o);
  }
  out.Set("segments", segments);
  out.Set("energy", TypedArrayFrom(env, r.energy));
  if (!r.pcm.empty()) out.Set("pcm", TypedArrayFrom(env, r.pcm));
  return out;
}

}  // namespace

Napi::Value JobToJs(Napi::Env env, const JobResult &r) {
  return std::visit([env](const auto &x) { return ToJs(env, x); }, r);
}
