#include "job_args.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "args.h"
#include "typed_arrays.h"
#include "whisper.h"

namespace job_args {

namespace {

// A list of non-empty Int32Arrays of valid token ids.
std::vector<Tokens> TokenLists(Napi::Env env, const Napi::Object &o, const char *key, int32_t n_vocab) {
  Napi::Value v = o.Get(key);
  args::Check(env, v.IsArray() && v.As<Napi::Array>().Length() > 0,
              std::string("job.") + key + " must be a non-empty array");
  Napi::Array list = v.As<Napi::Array>();
  std::vector<Tokens> out;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Tokens t = TokenArray(env, list.Get(i), key, n_vocab);
    args::Check(env, !t.empty(), std::string("every job.") + key + " entry must hold at least one token");
    out.push_back(std::move(t));
  }
  return out;
}

// A non-empty array of distinct layers: each -1 (after the output norm) or 0..n_layer-1.
std::vector<int32_t> HiddenLayers(Napi::Env env, Napi::Value v, int32_t n_layer) {
  const std::string what =
      "job.hiddenLayers must be a non-empty array of distinct integers from -1 to " + std::to_string(n_layer - 1);
  args::Check(env, v.IsArray(), what);
  Napi::Array a = v.As<Napi::Array>();
  args::Check(env, a.Length() > 0, what);
  std::vector<int32_t> layers;
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Value x = a.Get(i);
    const double d = x.IsNumber() ? x.As<Napi::Number>().DoubleValue() : NAN;
    args::Check(env, std::floor(d) == d && d >= -1 && d < n_layer, what);
    const auto il = static_cast<int32_t>(d);
    args::Check(env, std::find(layers.begin(), layers.end(), il) == layers.end(), what);
    layers.push_back(il);
  }
  return layers;
}

ScoreJob Score(Napi::Env env, const Napi::Object &o, const Model &model, Tokens &&prefix,
               std::vector<Tokens> &&branches) {
  ScoreJob job;
  job.prefix = std::move(prefix);
  job.branches = std::move(branches);
  job.options = TokenLists(env, o, "options", model.n_vocab);
  if (!o.Get("hidden").IsUndefined()) job.hidden = args::Bool(env, o, "job", "hidden");
  if (job.hidden && !o.Get("hiddenLayers").IsUndefined())
    job.hidden_layers = HiddenLayers(env, o.Get("hiddenLayers"), model.n_layer);
  return job;
}

SpanJob Spans(Napi::Env env, const Napi::Object &o, const Model &model, Tokens &&prefix,
              std::vector<Tokens> &&branches) {
  SpanJob sj;
  sj.prefix = std::move(prefix);
  sj.branches = std::move(branches);
  sj.source = TokenArray(env, o.Get("source"), "source", model.n_vocab);
  if (!o.Get("startTokens").IsUndefined()) {
    sj.start_tokens = TokenArray(env, o.Get("startTokens"), "startTokens", model.n_vocab);
    sj.start_lengths = args::Int32s(env, o.Get("startLengths"), "job.startLengths");
    sj.start_positions = args::Int32s(env, o.Get("startPositions"), "job.startPositions");
    size_t total = 0;
    bool positive = true;
    for (int32_t n : sj.start_lengths) {
      positive = positive && n > 0;
      total += static_cast<size_t>(std::max(n, 0));
    }
    args::Check(env,
                positive && total == sj.start_tokens.size() && sj.start_lengths.size() == sj.start_positions.size(),
                "job.startLengths must be positive, sum to the length of job.startTokens and match job.startPositions");
    for (int32_t at : sj.start_positions)
      args::Check(env, at >= 0 && at < static_cast<int32_t>(sj.source.size()),
                  "job.startPositions must index job.source");
    if (!o.Get("startEnds").IsUndefined()) {
      sj.start_ends = args::Int32s(env, o.Get("startEnds"), "job.startEnds");
      bool within = sj.start_ends.size() == sj.start_positions.size();
      for (size_t k = 0; within && k < sj.start_ends.size(); ++k)
        within = sj.start_ends[k] >= sj.start_positions[k] && sj.start_ends[k] < static_cast<int32_t>(sj.source.size());
      args::Check(env, within,
                  "job.startEnds must match job.startPositions, each from its position to the source's end");
    }
  }
  sj.stops = TokenArray(env, o.Get("stops"), "stops", model.n_vocab);
  args::Check(env, !sj.stops.empty(), "job.stops must hold at least one token");
  sj.max_span_tokens = args::Int(env, o, "job", "maxSpanTokens", 1);
  sj.max_spans = args::Int(env, o, "job", "maxSpans", 1);
  auto per_branch = [&](const char *key, std::vector<int32_t> &to) {
    if (o.Get(key).IsUndefined()) return;
    to = args::Int32s(env, o.Get(key), std::string("job.") + key);
    bool valid = to.size() == sj.branches.size();
    for (int32_t v : to) valid = valid && v >= 1;
    args::Check(env, valid, std::string("job.") + key + " must hold one count >= 1 per branch");
  };
  per_branch("branchMaxSpans", sj.branch_max_spans);
  per_branch("branchMaxSpanTokens", sj.branch_max_span_tokens);
  if (!o.Get("branchStarts").IsUndefined()) {
    sj.branch_starts = args::Int32s(env, o.Get("branchStarts"), "job.branchStarts");
    args::Check(env, sj.branch_starts.size() == sj.branches.size() * sj.source.size(),
                "job.branchStarts must have one flag per branch and job.source token");
  }
  // One token each, read from the logits: -1 (off) or a token id of the vocabulary.
  const int32_t last_token = model.n_vocab - 1;
  auto token = [&](const char *key, llama_token &to) {
    if (!o.Get(key).IsUndefined()) to = args::Int(env, o, "job", key, -1, last_token);
  };
  token("separator", sj.separator);
  token("inlineSeparator", sj.inline_separator);
  token("none", sj.none);
  if (!o.Get("minListLogprob").IsUndefined())
    sj.min_list_logprob = static_cast<float>(args::Number(env, o, "job", "minListLogprob"));
  if (!o.Get("joinNext").IsUndefined()) {
    sj.join_next = args::Int32s(env, o.Get("joinNext"), "job.joinNext");
    args::Check(env, sj.join_next.size() == sj.source.size(), "job.joinNext must have one flag per job.source token");
    sj.min_join_logprob = static_cast<float>(args::Number(env, o, "job", "minJoinLogprob"));
  }
  if (!o.Get("closingTokens").IsUndefined()) {
    sj.closing_tokens = args::Int32s(env, o.Get("closingTokens"), "job.closingTokens");
    args::Check(env, sj.closing_tokens.size() == sj.source.size(),
                "job.closingTokens must have one token (or -1) per job.source token");
    for (int32_t t : sj.closing_tokens)
      args::Check(env, t >= -1 && t <= last_token, "job.closingTokens: token id out of the vocabulary");
  }
  if (!o.Get("forkWithin").IsUndefined())
    sj.fork_within = static_cast<float>(args::Number(env, o, "job", "forkWithin"));
  if (!o.Get("firstOptions").IsUndefined())
    sj.first_options = TokenArray(env, o.Get("firstOptions"), "firstOptions", model.n_vocab);
  if (!o.Get("scoredBranches").IsUndefined())
    sj.scored_branches = args::Int(env, o, "job", "scoredBranches", 0, static_cast<int32_t>(sj.branches.size()));
  return sj;
}

}  // namespace

Tokens TokenArray(Napi::Env env, const Napi::Value &v, const char *key, int32_t n_vocab) {
  args::Check(env, args::IsArrayOf(v, napi_int32_array), std::string("job.") + key + " must hold Int32Arrays");
  Tokens t = VectorFrom(v.As<Napi::Int32Array>());
  for (llama_token x : t)
    args::Check(env, x >= 0 && x < n_vocab, std::string("job.") + key + ": token id out of the vocabulary");
  return t;
}

Submission ParseSubmit(Napi::Env env, const Napi::Object &o, const Model &model) {
  Napi::Value kind = o.Get("kind");
  const std::string k = kind.IsString() ? kind.As<Napi::String>().Utf8Value() : "";
  args::Check(env, k == "score" || k == "spans", "job.kind must be 'score' or 'spans'");
  Tokens prefix = TokenArray(env, o.Get("prefix"), "prefix", model.n_vocab);
  std::vector<Tokens> branches = TokenLists(env, o, "branches", model.n_vocab);
  const bool background = !o.Get("background").IsUndefined() && args::Bool(env, o, "job", "background");
  args::Check(env, !background || model.has_background, "job.background needs load's backgroundSlots");
  if (k == "score") return {Score(env, o, model, std::move(prefix), std::move(branches)), background};
  return {Spans(env, o, model, std::move(prefix), std::move(branches)), background};
}

TranscribeJob ParseTranscribe(Napi::Env env, const Napi::Object &o) {
  Napi::Value audio = o.Get("audio");
  args::Check(env, args::IsArrayOf(audio, napi_uint8_array), "job.audio must be a Uint8Array");
  TranscribeJob job;
  job.audio = VectorFrom(audio.As<Napi::Uint8Array>());
  job.max_seconds = args::Number(env, o, "job", "maxSeconds");
  args::Check(env, job.max_seconds > 0, "job.maxSeconds must be positive");
  job.language = args::String(env, o, "job", "language");
  args::Check(env, job.language == "auto" || whisper_lang_id(job.language.c_str()) >= 0,
              "job.language is not a whisper language code");
  Napi::Value pcm = o.Get("wantPcm");
  args::Check(env, pcm.IsUndefined() || pcm.IsBoolean(), "job.wantPcm must be a boolean");
  job.want_pcm = pcm.IsBoolean() && pcm.As<Napi::Boolean>().Value();
  return job;
}

}  // namespace job_args
