#include "job_results.h"

#include <variant>

#include "names.h"
#include "typed_arrays.h"

namespace {

Napi::Object StatsToJs(Napi::Env env, const Names &n, const JobStats &r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set(n.prompt_tokens.Value(), r.prompt_tokens);
  out.Set(n.cached_tokens.Value(), r.cached_tokens);
  out.Set(n.decode_ms.Value(), r.decode_ms);
  return out;
}

Napi::Value ToJs(Napi::Env env, const Names &n, const ScoreResult &r) {
  Napi::Object out = StatsToJs(env, n, r);
  out.Set(n.logprobs.Value(), TypedArrayFrom(env, r.logprobs));
  if (!r.hidden.empty()) out.Set(n.hidden.Value(), TypedArrayFrom(env, r.hidden));  // the job asked
  return out;
}

Napi::Value ToJs(Napi::Env env, const Names &n, const SpanResult &r) {
  Napi::Object out = StatsToJs(env, n, r);
  Napi::Array branches = Napi::Array::New(env, r.spans.size());
  for (size_t b = 0; b < r.spans.size(); ++b) {
    Napi::Array list = Napi::Array::New(env, r.spans[b].size());
    for (size_t i = 0; i < r.spans[b].size(); ++i) {
      Napi::Object span = Napi::Object::New(env);
      span.Set(n.start.Value(), r.spans[b][i].start);
      span.Set(n.end.Value(), r.spans[b][i].end);
      span.Set(n.logprob.Value(), r.spans[b][i].logprob);
      span.Set(n.first_logprob.Value(), r.spans[b][i].first_logprob);
      span.Set(n.close_logprob.Value(), r.spans[b][i].close_logprob);
      span.Set(n.stop_logprob.Value(), r.spans[b][i].stop_logprob);
      list.Set(i, span);
    }
    branches.Set(b, list);
  }
  out.Set(n.spans.Value(), branches);
  out.Set(n.none_logprobs.Value(), TypedArrayFrom(env, r.none_logprob));
  out.Set(n.first_logprobs.Value(), TypedArrayFrom(env, r.first_logprobs));
  return out;
}

Napi::Value ToJs(Napi::Env env, const Names &n, const TranscribeResult &r) {
  Napi::Object out = StatsToJs(env, n, r);
  out.Set(n.samples.Value(), static_cast<double>(r.samples));
  out.Set(n.format.Value(), r.format);
  out.Set(n.codec.Value(), r.codec);
  Napi::Array segments = Napi::Array::New(env, r.segments.size());
  for (size_t s = 0; s < r.segments.size(); ++s) {
    const TranscribedSegment &seg = r.segments[s];
    Napi::Object o = Napi::Object::New(env);
    o.Set(n.start.Value(), seg.t0);
    o.Set(n.end.Value(), seg.t1);
    o.Set(n.no_speech.Value(), seg.no_speech);
    Napi::Array tokens = Napi::Array::New(env, seg.tokens.size());
    for (size_t t = 0; t < seg.tokens.size(); ++t) {
      const TranscribedToken &tok = seg.tokens[t];
      Napi::Object to = Napi::Object::New(env);
      to.Set(n.text.Value(), tok.text);
      to.Set(n.start.Value(), tok.t0);
      to.Set(n.end.Value(), tok.t1);
      to.Set(n.aligned.Value(), tok.t_dtw);
      to.Set(n.p.Value(), tok.p);
      tokens.Set(t, to);
    }
    o.Set(n.tokens.Value(), tokens);
    segments.Set(s, o);
  }
  out.Set(n.segments.Value(), segments);
  out.Set(n.energy.Value(), TypedArrayFrom(env, r.energy));
  if (!r.pcm.empty()) out.Set(n.pcm.Value(), TypedArrayFrom(env, r.pcm));
  return out;
}

}  // namespace

Napi::Value JobToJs(Napi::Env env, const JobResult &r) {
  const Names &n = Names::Of(env);
  return std::visit([env, &n](const auto &x) { return ToJs(env, n, x); }, r);
}
