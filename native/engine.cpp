#include "engine.h"

#include <algorithm>
#include <limits>

#include "transcribe.h"

// Completion id of a finished whisper model load (job ids count up from 1).
constexpr uint64_t kWhisperLoad = std::numeric_limits<uint64_t>::max();

// A message from a slot thread (or the loader thread) to the main thread.
struct Completion {
  uint64_t id;  // 0: the model load finished; kWhisperLoad: the whisper model load finished
  JobOutcome outcome;
};

namespace {

#define REQUIRE(cond, msg)                                \
  if (!(cond)) {                                          \
    Napi::TypeError::New(env, msg).ThrowAsJavaScriptException(); \
    return env.Undefined();                               \
  }

Napi::Error CodedError(Napi::Env env, const char *code, const std::string &message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

Tokens ToTokens(const Napi::Int32Array &a) { return Tokens(a.Data(), a.Data() + a.ElementLength()); }

Napi::Object StatsToJs(Napi::Env env, const JobStats &r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("promptTokens", r.prompt_tokens);
  out.Set("cachedTokens", r.cached_tokens);
  out.Set("decodeMs", r.decode_ms);
  return out;
}

Napi::Value ToJs(Napi::Env env, const ScoreResult &r) {
  Napi::Object out = StatsToJs(env, r);
  Napi::Float32Array lp = Napi::Float32Array::New(env, r.logprobs.size());
  std::copy(r.logprobs.begin(), r.logprobs.end(), lp.Data());
  out.Set("logprobs", lp);
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
      list.Set(i, span);
    }
    branches.Set(b, list);
  }
  out.Set("spans", branches);
  Napi::Float32Array none = Napi::Float32Array::New(env, r.none_logprob.size());
  std::copy(r.none_logprob.begin(), r.none_logprob.end(), none.Data());
  out.Set("noneLogprobs", none);
  Napi::Float32Array first = Napi::Float32Array::New(env, r.first_logprobs.size());
  std::copy(r.first_logprobs.begin(), r.first_logprobs.end(), first.Data());
  out.Set("firstLogprobs", first);
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
  Napi::Float32Array energy = Napi::Float32Array::New(env, r.energy.size());
  std::copy(r.energy.begin(), r.energy.end(), energy.Data());
  out.Set("energy", energy);
  if (!r.pcm.empty()) {
    Napi::Float32Array pcm = Napi::Float32Array::New(env, r.pcm.size());
    std::copy(r.pcm.begin(), r.pcm.end(), pcm.Data());
    out.Set("pcm", pcm);
  }
  return out;
}

int32_t IntOption(const Napi::Object &o, const char *key, int32_t fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int32Value() : fallback;
}

// An Int32Array of plain integers (not token ids); throws a TypeError naming `key`.
std::vector<int32_t> Int32s(Napi::Env env, const Napi::Object &o, const char *key) {
  Napi::Value v = o.Get(key);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
    throw Napi::TypeError::New(env, std::string("job.") + key + " must be an Int32Array");
  return ToTokens(v.As<Napi::Int32Array>());
}

}  // namespace

Napi::Function Engine::Define(Napi::Env env) {
  return DefineClass(env, "Engine",
                     {InstanceMethod("load", &Engine::Load), InstanceMethod("loadWhisper", &Engine::LoadWhisper),
                      InstanceMethod("info", &Engine::Info),
                      InstanceMethod("tokenize", &Engine::Tokenize),
                      InstanceMethod("applyTemplate", &Engine::ApplyTemplate),
                      InstanceMethod("submit", &Engine::Submit), InstanceMethod("transcribe", &Engine::Transcribe),
                      InstanceMethod("cancel", &Engine::Cancel),
                      InstanceMethod("tokenBytes", &Engine::TokenBytes),
                      InstanceMethod("specialTokens", &Engine::SpecialTokens),
                      InstanceMethod("stats", &Engine::Stats), InstanceMethod("close", &Engine::Close)});
}

Engine::Engine(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Engine>(info) {
  Napi::Env env = info.Env();
  tsfn_ = Napi::TypedThreadSafeFunction<Engine, Completion, Deliver>::New(env, "decision-machine-slots", 0, 1, this);
  tsfn_.Unref(env);  // referenced only while work is pending (Hold / Release)
  // At process exit the environment is torn down before (or without) this object's finalizer:
  // stop the slot threads then, and leave the hook and the function to Node.
  cleanup_ = env.AddCleanupHook(std::function<void()>([this] {
    torn_down_ = true;
    Shutdown();
  }));
}

Engine::~Engine() {
  if (torn_down_) return;
  cleanup_.Remove(Env());
  Shutdown();
  tsfn_.Release();
}

void Engine::Shutdown() {
  if (loader_.joinable()) loader_.join();
  loaded_ = false;
  pool_.reset();
  if (whisper_ != nullptr) whisper_free(whisper_);
  whisper_ = nullptr;
  if (model_ != nullptr) llama_model_free(model_);
  model_ = nullptr;
}

void Engine::Deliver(Napi::Env env, Napi::Function, Engine *engine, Completion *c) {
  if (env != nullptr) engine->Finish(env, c);
  delete c;
}

// Pending work keeps the event loop alive and this object reachable; idle, neither.
void Engine::Hold(Napi::Env env) {
  if (pending_++ == 0) {
    tsfn_.Ref(env);
    Ref();
  }
}

void Engine::Release(Napi::Env env) {
  if (--pending_ == 0) {
    tsfn_.Unref(env);
    Unref();
  }
}

void Engine::Finish(Napi::Env env, Completion *c) {
  auto it = waiting_.find(c->id);
  if (it == waiting_.end()) return;
  Napi::Promise::Deferred deferred = it->second;
  waiting_.erase(it);
  Napi::HandleScope scope(env);
  const JobOutcome &o = c->outcome;
  if (c->id == 0) {
    if (loader_.joinable()) loader_.join();
    loaded_ = o.status == JobStatus::ok;
    if (loaded_) deferred.Resolve(env.Undefined());
    else deferred.Reject(CodedError(env, "load_failed", o.message).Value());
  } else if (c->id == kWhisperLoad) {
    if (loader_.joinable()) loader_.join();
    if (o.status == JobStatus::ok) deferred.Resolve(env.Undefined());
    else deferred.Reject(CodedError(env, "load_failed", o.message).Value());
  } else if (o.status == JobStatus::rejected) {
    deferred.Reject(CodedError(env, o.code.c_str(), o.message).Value());
  } else if (o.status == JobStatus::ok) {
    deferred.Resolve(std::visit([env](const auto &r) { return ToJs(env, r); }, o.result));
  } else {
    const char *code = o.status == JobStatus::cancelled ? "cancelled" : "runner_error";
    deferred.Reject(CodedError(env, code, o.message).Value());
  }
  Release(env);
}

// load({ modelPath, slots, contextSize, batchSize, sequences, threads }) -> Promise<void>
// The model is read and the slot contexts created on a separate thread.
Napi::Value Engine::Load(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsObject(), "load(options) expects an object");
  REQUIRE(model_ == nullptr && !loader_.joinable(), "engine is already loaded");
  Napi::Object o = info[0].As<Napi::Object>();
  REQUIRE(o.Get("modelPath").IsString(), "options.modelPath must be a string");
  std::string path = o.Get("modelPath").As<Napi::String>();
  int32_t slots = IntOption(o, "slots", 2);
  SlotConfig cfg{IntOption(o, "contextSize", 8192), IntOption(o, "batchSize", 512), IntOption(o, "sequences", 64),
                 IntOption(o, "threads", 2)};
  REQUIRE(slots >= 1 && cfg.n_ctx >= 64 && cfg.n_batch >= 1 && cfg.n_seq >= 3 && cfg.n_threads >= 1,
          "options out of range");

  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  waiting_.emplace(0, deferred);
  Hold(env);
  loader_ = std::thread([this, path, slots, cfg] {
    auto *c = new Completion{0, {}};
    llama_model_params mp = llama_model_default_params();
    // Read weights into memory instead of mapping them: the CPU backend repacks most of them into
    // its own buffers, and mapped originals would stay resident beside the copies (+600 MB).
    mp.load_mode = LLAMA_LOAD_MODE_NONE;
    model_ = llama_model_load_from_file(path.c_str(), mp);
    if (model_ == nullptr) {
      c->outcome.message = "could not load model " + path;
    } else {
      try {
        pool_ = std::make_unique<SlotPool>(model_, cfg, slots, [this](uint64_t id, JobOutcome &&out) {
          tsfn_.BlockingCall(new Completion{id, std::move(out)});
        });
        c->outcome.status = JobStatus::ok;
      } catch (const std::exception &e) {
        c->outcome.message = e.what();
        llama_model_free(model_);
        model_ = nullptr;
      }
    }
    tsfn_.BlockingCall(c);
  });
  return deferred.Promise();
}

// loadWhisper({ modelPath, heads, vadPath? }) -> Promise<void>: a whisper.cpp ggml model for
// transcription jobs, read on a separate thread after load() finished. `heads` names the model's
// alignment heads ("base", "tiny.en"...) for word timestamps; `vadPath` a voice activity model,
// loaded once here to check it (each slot then loads its own).
Napi::Value Engine::LoadWhisper(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsObject(), "loadWhisper(options) expects an object");
  REQUIRE(loaded_ && !loader_.joinable(), "load() must finish before loadWhisper()");
  REQUIRE(whisper_ == nullptr, "a whisper model is already loaded");
  Napi::Object o = info[0].As<Napi::Object>();
  REQUIRE(o.Get("modelPath").IsString(), "options.modelPath must be a string");
  std::string path = o.Get("modelPath").As<Napi::String>();
  std::string heads = o.Get("heads").IsString() ? o.Get("heads").As<Napi::String>().Utf8Value() : "";
  std::string vad = o.Get("vadPath").IsString() ? o.Get("vadPath").As<Napi::String>().Utf8Value() : "";
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  waiting_.emplace(kWhisperLoad, deferred);
  Hold(env);
  loader_ = std::thread([this, path, heads, vad] {
    auto *c = new Completion{kWhisperLoad, {}};
    whisper_vad_context *vad_check = vad.empty() ? nullptr : load_vad(vad, 1);
    if (!vad.empty() && vad_check == nullptr) {
      c->outcome.message = "could not load voice activity model " + vad;
    } else if ((whisper_ = load_whisper(path, heads)) == nullptr) {
      c->outcome.message = "could not load whisper model " + path;
    } else {
      pool_->set_whisper(whisper_, vad);
      c->outcome.status = JobStatus::ok;
    }
    if (vad_check != nullptr) whisper_vad_free(vad_check);
    tsfn_.BlockingCall(c);
  });
  return deferred.Promise();
}

const llama_vocab *Engine::Vocab(Napi::Env env) {
  if (!loaded_) {
    CodedError(env, "not_loaded", "engine is not loaded").ThrowAsJavaScriptException();
    return nullptr;
  }
  return llama_model_get_vocab(model_);
}

Napi::Value Engine::Info(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (Vocab(env) == nullptr) return env.Undefined();
  char desc[256];
  llama_model_desc(model_, desc, sizeof desc);
  Napi::Object out = Napi::Object::New(env);
  out.Set("description", desc);
  out.Set("sizeBytes", static_cast<double>(llama_model_size(model_)));
  out.Set("parameters", static_cast<double>(llama_model_n_params(model_)));
  out.Set("trainContext", llama_model_n_ctx_train(model_));
  out.Set("vocabSize", llama_vocab_n_tokens(llama_model_get_vocab(model_)));
  const char *tmpl = llama_model_chat_template(model_, nullptr);
  out.Set("chatTemplate", tmpl != nullptr ? Napi::Value(Napi::String::New(env, tmpl)) : env.Null());
  return out;
}

// tokenize(text, addSpecial, parseSpecial) -> Int32Array. Synchronous: tokenizing is fast.
Napi::Value Engine::Tokenize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 3 && info[0].IsString(), "tokenize(text, addSpecial, parseSpecial)");
  const llama_vocab *vocab = Vocab(env);
  if (vocab == nullptr) return env.Undefined();
  std::string text = info[0].As<Napi::String>();
  bool add_special = info[1].ToBoolean(), parse_special = info[2].ToBoolean();
  std::vector<llama_token> tokens(text.size() + 8);
  int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), add_special, parse_special);
  }
  Napi::Int32Array out = Napi::Int32Array::New(env, static_cast<size_t>(std::max(n, 0)));
  std::copy(tokens.begin(), tokens.begin() + std::max(n, 0), out.Data());
  return out;
}

// applyTemplate([{ role, content }], addAssistant) -> string, with the model's own chat template.
Napi::Value Engine::ApplyTemplate(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 2 && info[0].IsArray(), "applyTemplate(messages, addAssistant)");
  if (Vocab(env) == nullptr) return env.Undefined();
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> roles, contents;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Object m = arr.Get(i).As<Napi::Object>();
    roles.push_back(m.Get("role").ToString());
    contents.push_back(m.Get("content").ToString());
  }
  std::vector<llama_chat_message> chat;
  size_t total = 0;
  for (size_t i = 0; i < roles.size(); ++i) {
    chat.push_back({roles[i].c_str(), contents[i].c_str()});
    total += contents[i].size();
  }
  const char *tmpl = llama_model_chat_template(model_, nullptr);
  std::vector<char> buf(total * 2 + 1024);
  int32_t n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), info[1].ToBoolean(), buf.data(),
                                        static_cast<int32_t>(buf.size()));
  if (n > static_cast<int32_t>(buf.size())) {
    buf.resize(static_cast<size_t>(n));
    n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), info[1].ToBoolean(), buf.data(),
                                  static_cast<int32_t>(buf.size()));
  }
  REQUIRE(n >= 0, "the model's chat template is not supported");
  return Napi::String::New(env, buf.data(), static_cast<size_t>(n));
}

// Reads a list of non-empty Int32Arrays of valid token ids; throws a TypeError naming `key`.
std::vector<Tokens> Engine::TokenLists(Napi::Env env, const Napi::Object &o, const char *key) {
  Napi::Value v = o.Get(key);
  if (!v.IsArray() || v.As<Napi::Array>().Length() == 0) throw Napi::TypeError::New(env, std::string("job.") + key + " must be a non-empty array");
  Napi::Array list = v.As<Napi::Array>();
  std::vector<Tokens> out;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Tokens t = TokenArray(env, list.Get(i), key);
    if (t.empty()) throw Napi::TypeError::New(env, std::string("every job.") + key + " entry must hold at least one token");
    out.push_back(std::move(t));
  }
  return out;
}

Tokens Engine::TokenArray(Napi::Env env, Napi::Value v, const char *key) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
    throw Napi::TypeError::New(env, std::string("job.") + key + " must hold Int32Arrays");
  Tokens t = ToTokens(v.As<Napi::Int32Array>());
  const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model_));
  for (llama_token x : t)
    if (x < 0 || x >= n_vocab) throw Napi::TypeError::New(env, std::string("job.") + key + ": token id out of the vocabulary");
  return t;
}

// submit({ kind: 'score', prefix, branches, options })
// submit({ kind: 'spans', prefix, branches, source, stops, separator, none, maxSpanTokens, maxSpans,
//          minListLogprob, firstOptions, scoredBranches })
//   -> { id, result: Promise<ScoreResult | SpanResult> }
Napi::Value Engine::Submit(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsObject(), "submit(job) expects an object");
  if (Vocab(env) == nullptr) return env.Undefined();
  Napi::Object o = info[0].As<Napi::Object>();
  std::string kind = o.Get("kind").IsString() ? o.Get("kind").As<Napi::String>().Utf8Value() : "";
  Job job;
  try {
    Tokens prefix = TokenArray(env, o.Get("prefix"), "prefix");
    std::vector<Tokens> branches = TokenLists(env, o, "branches");
    if (kind == "score") {
      job = ScoreJob{std::move(prefix), std::move(branches), TokenLists(env, o, "options")};
    } else if (kind == "spans") {
      SpanJob sj;
      sj.prefix = std::move(prefix);
      sj.branches = std::move(branches);
      sj.source = TokenArray(env, o.Get("source"), "source");
      if (o.Get("startTokens").IsTypedArray()) {
        sj.start_tokens = TokenArray(env, o.Get("startTokens"), "startTokens");
        sj.start_lengths = Int32s(env, o, "startLengths");
        sj.start_positions = Int32s(env, o, "startPositions");
        size_t total = 0;
        bool positive = true;
        for (int32_t n : sj.start_lengths) {
          positive = positive && n > 0;
          total += static_cast<size_t>(std::max(n, 0));
        }
        if (!positive || total != sj.start_tokens.size() || sj.start_lengths.size() != sj.start_positions.size())
          throw Napi::TypeError::New(env, "job.startLengths must be positive, sum to the length of job.startTokens and match job.startPositions");
        for (int32_t at : sj.start_positions)
          if (at < 0 || at >= static_cast<int32_t>(sj.source.size()))
            throw Napi::TypeError::New(env, "job.startPositions must index job.source");
      }
      sj.stops = TokenArray(env, o.Get("stops"), "stops");
      sj.separator = IntOption(o, "separator", -1);
      sj.none = IntOption(o, "none", -1);
      sj.max_span_tokens = std::max(1, IntOption(o, "maxSpanTokens", 32));
      sj.max_spans = std::max(1, IntOption(o, "maxSpans", 1));
      if (o.Get("minListLogprob").IsNumber()) sj.min_list_logprob = o.Get("minListLogprob").As<Napi::Number>().FloatValue();
      if (o.Get("firstOptions").IsTypedArray()) sj.first_options = TokenArray(env, o.Get("firstOptions"), "firstOptions");
      sj.scored_branches = std::max(0, IntOption(o, "scoredBranches", 0));
      if (sj.scored_branches >= static_cast<int32_t>(sj.branches.size()))
        throw Napi::TypeError::New(env, "job.scoredBranches must leave at least one span branch");
      if (sj.stops.empty()) throw Napi::TypeError::New(env, "job.stops must hold at least one token");
      job = std::move(sj);
    } else {
      throw Napi::TypeError::New(env, "job.kind must be 'score' or 'spans'");
    }
  } catch (const Napi::Error &e) {
    e.ThrowAsJavaScriptException();
    return env.Undefined();
  }

  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  uint64_t id = pool_->submit(std::move(job));
  waiting_.emplace(id, deferred);
  Hold(env);
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", static_cast<double>(id));
  out.Set("result", deferred.Promise());
  return out;
}

// transcribe({ audio: Uint8Array, maxSeconds, language, wantPcm }) -> { id, result: Promise<TranscribeResult> }
// A job like submit()'s (cancel(id) works the same); bad audio rejects with code "invalid_audio"
// or "audio_too_long". The bytes are copied: the caller may reuse its buffer at once.
Napi::Value Engine::Transcribe(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsObject(), "transcribe(job) expects an object");
  if (Vocab(env) == nullptr) return env.Undefined();
  Napi::Object o = info[0].As<Napi::Object>();
  REQUIRE(whisper_ != nullptr, "no whisper model is loaded: call loadWhisper() first");
  Napi::Value audio = o.Get("audio");
  REQUIRE(audio.IsTypedArray() && audio.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array,
          "job.audio must be a Uint8Array");
  Napi::Uint8Array bytes = audio.As<Napi::Uint8Array>();
  TranscribeJob job;
  job.audio.assign(bytes.Data(), bytes.Data() + bytes.ElementLength());
  if (o.Get("maxSeconds").IsNumber()) job.max_seconds = o.Get("maxSeconds").As<Napi::Number>().DoubleValue();
  REQUIRE(job.max_seconds > 0, "job.maxSeconds must be positive");
  if (o.Get("language").IsString()) job.language = o.Get("language").As<Napi::String>().Utf8Value();
  REQUIRE(job.language == "auto" || whisper_lang_id(job.language.c_str()) >= 0, "job.language is not a whisper language code");
  job.want_pcm = o.Get("wantPcm").ToBoolean();
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  uint64_t id = pool_->submit(std::move(job));
  waiting_.emplace(id, deferred);
  Hold(env);
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", static_cast<double>(id));
  out.Set("result", deferred.Promise());
  return out;
}

// tokenBytes(tokens) -> Int32Array: the UTF-8 byte length of each token's text, for offsets.
Napi::Value Engine::TokenBytes(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsTypedArray(), "tokenBytes(tokens)");
  const llama_vocab *vocab = Vocab(env);
  if (vocab == nullptr) return env.Undefined();
  Tokens tokens;
  try {
    tokens = TokenArray(env, info[0], "tokens");
  } catch (const Napi::Error &e) {
    e.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Int32Array out = Napi::Int32Array::New(env, tokens.size());
  char buf[256];
  for (size_t i = 0; i < tokens.size(); ++i) out[i] = std::max(0, llama_token_to_piece(vocab, tokens[i], buf, sizeof buf, 0, false));
  return out;
}

// specialTokens() -> { eos, eot }: the ids that end a reply (-1 when the model has none).
Napi::Value Engine::SpecialTokens(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const llama_vocab *vocab = Vocab(env);
  if (vocab == nullptr) return env.Undefined();
  Napi::Object out = Napi::Object::New(env);
  out.Set("eos", llama_vocab_eos(vocab));
  out.Set("eot", llama_vocab_eot(vocab));
  return out;
}

Napi::Value Engine::Cancel(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  REQUIRE(info.Length() == 1 && info[0].IsNumber(), "cancel(id)");
  if (loaded_) pool_->cancel(static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
  return env.Undefined();
}

Napi::Value Engine::Stats(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  PoolStats s = loaded_ ? pool_->stats() : PoolStats{};
  out.Set("slots", s.slots);
  out.Set("running", s.running);
  out.Set("queued", s.queued);
  out.Set("completed", static_cast<double>(s.completed));
  out.Set("failed", static_cast<double>(s.failed));
  out.Set("cancelled", static_cast<double>(s.cancelled));
  out.Set("rejected", static_cast<double>(s.rejected));
  return out;
}

// close(): cancels what is queued or running (their promises reject with code "cancelled"),
// joins the slot threads and frees the model.
Napi::Value Engine::Close(const Napi::CallbackInfo &info) {
  Shutdown();
  return info.Env().Undefined();
}
