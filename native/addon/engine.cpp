#include "engine.h"

#include <algorithm>

#include "args.h"
#include "job_args.h"
#include "job_results.h"
#include "names.h"
#include "transcribe.h"
#include "typed_arrays.h"

Napi::Function Engine::Define(Napi::Env env) {
  return DefineClass(
      env, "Engine",
      {InstanceMethod("load", &Engine::Load), InstanceMethod("loadWhisper", &Engine::LoadWhisper),
       InstanceMethod("info", &Engine::Info), InstanceMethod("hiddenSize", &Engine::HiddenSize),
       InstanceMethod("layerCount", &Engine::LayerCount), InstanceMethod("tokenize", &Engine::Tokenize),
       InstanceMethod("applyTemplate", &Engine::ApplyTemplate), InstanceMethod("submit", &Engine::Submit),
       InstanceMethod("transcribe", &Engine::Transcribe), InstanceMethod("cancel", &Engine::Cancel),
       InstanceMethod("tokenBytes", &Engine::TokenBytes), InstanceMethod("specialTokens", &Engine::SpecialTokens),
       InstanceMethod("stats", &Engine::Stats), InstanceMethod("close", &Engine::Close)});
}

Engine::Engine(const Napi::CallbackInfo &info)
    : Napi::ObjectWrap<Engine>(info),
      completions_(info.Env(), this, "decision-machine-engine", [this] { Shutdown(); }) {}

Engine::~Engine() {
  if (completions_.torn_down()) return;
  Shutdown();
  completions_.release();
}

// Waits for a load in progress, cancels what is queued or running (each still settles), joins the
// slot threads and frees the models.
void Engine::Shutdown() {
  loader_.stop();
  loaded_ = false;
  whisper_loaded_ = false;
  pool_.reset();
  if (whisper_ != nullptr) whisper_free(whisper_);
  whisper_ = nullptr;
  if (model_ != nullptr) llama_model_free(model_);
  model_ = nullptr;
}

// load({ modelPath, slots, backgroundSlots, contextSize, batchSize, sequences, threads, promptCacheMiB,
//        borrowTexts })
//   -> Promise<void>
// The model is read and the slot contexts created on the loader thread.
Napi::Value Engine::Load(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = args::Object(info, "load(options)");
  args::Check(env, !load_called_, "engine is already loaded");
  std::string path = args::String(env, o, "options", "modelPath");
  const int32_t slots = args::Int(env, o, "options", "slots", 1);
  const int32_t background =
      o.Get("backgroundSlots").IsUndefined() ? 0 : args::Int(env, o, "options", "backgroundSlots", 0);
  const SlotConfig cfg{args::Int(env, o, "options", "contextSize", 64),
                       args::Int(env, o, "options", "batchSize", 1),
                       args::Int(env, o, "options", "sequences", 3),
                       args::Int(env, o, "options", "threads", 1),
                       static_cast<size_t>(args::Int(env, o, "options", "promptCacheMiB", 0)) << 20,
                       args::Bool(env, o, "options", "borrowTexts")};
  load_called_ = true;
  Completions<Engine>::Ticket t = completions_.add(env);
  loader_.post([this, id = t.id, path, slots, background, cfg](bool run) {
    Outcome<std::monostate> out;
    out.code = "load_failed";
    if (!run) {
      out.message = "engine is closed";
    } else {
      llama_model_params mp = llama_model_default_params();
      // Read weights into memory instead of mapping them: the CPU backend repacks most of them into
      // its own buffers, and mapped originals would stay resident beside the copies (+600 MB).
      mp.load_mode = LLAMA_LOAD_MODE_NONE;
      model_ = llama_model_load_from_file(path.c_str(), mp);
      if (model_ == nullptr) {
        out.message = "could not load model " + path;
      } else {
        try {
          pool_ = std::make_unique<SlotPool>(model_, cfg, slots, background, [this](uint64_t job, JobOutcome &&done) {
            completions_.post(job, std::move(done), JobToJs);
          });
          out.status = Status::ok;
        } catch (const std::exception &e) {
          out.message = e.what();
          llama_model_free(model_);
          model_ = nullptr;
        }
      }
    }
    completions_.post(id, std::move(out), [this](Napi::Env env, const std::monostate &) {
      loaded_ = pool_ != nullptr;  // false when close() came first
      return env.Undefined();
    });
  });
  return t.promise;
}

// loadWhisper({ modelPath, heads, vadPath }) -> Promise<void>: a whisper.cpp ggml model for
// transcription jobs, read on the loader thread after load() finished. `heads` names the model's
// alignment heads ("base", "tiny.en"...; "" for none) for word timestamps; `vadPath` a voice
// activity model ("" for none), loaded once here to check it (each slot then loads its own).
Napi::Value Engine::LoadWhisper(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = args::Object(info, "loadWhisper(options)");
  args::Check(env, loaded_, "load() must finish before loadWhisper()");
  args::Check(env, !whisper_called_, "a whisper model is already loaded");
  std::string path = args::String(env, o, "options", "modelPath");
  std::string heads = args::String(env, o, "options", "heads");
  std::string vad = args::String(env, o, "options", "vadPath");
  whisper_called_ = true;
  Completions<Engine>::Ticket t = completions_.add(env);
  loader_.post([this, id = t.id, path, heads, vad](bool run) {
    Outcome<std::monostate> out;
    out.code = "load_failed";
    whisper_vad_context *vad_check = run && !vad.empty() ? load_vad(vad, 1) : nullptr;
    if (!run) {
      out.message = "engine is closed";
    } else if (!vad.empty() && vad_check == nullptr) {
      out.message = "could not load voice activity model " + vad;
    } else if ((whisper_ = load_whisper(path, heads)) == nullptr) {
      out.message = "could not load whisper model " + path;
    } else {
      pool_->set_whisper(whisper_, vad);
      out.status = Status::ok;
    }
    if (vad_check != nullptr) whisper_vad_free(vad_check);
    completions_.post(id, std::move(out), [this](Napi::Env env, const std::monostate &) {
      whisper_loaded_ = true;
      return env.Undefined();
    });
  });
  return t.promise;
}

const llama_vocab *Engine::Vocab(Napi::Env env) {
  if (!loaded_) throw CodedError(env, "not_loaded", "engine is not loaded");
  return llama_model_get_vocab(model_);
}

Napi::Value Engine::Info(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const llama_vocab *vocab = Vocab(env);
  char desc[256];
  llama_model_desc(model_, desc, sizeof desc);
  Napi::Object out = Napi::Object::New(env);
  out.Set("description", desc);
  out.Set("sizeBytes", static_cast<double>(llama_model_size(model_)));
  out.Set("parameters", static_cast<double>(llama_model_n_params(model_)));
  out.Set("trainContext", llama_model_n_ctx_train(model_));
  out.Set("vocabSize", llama_vocab_n_tokens(vocab));
  const char *tmpl = llama_model_chat_template(model_, nullptr);
  out.Set("chatTemplate", tmpl != nullptr ? Napi::Value(Napi::String::New(env, tmpl)) : env.Null());
  return out;
}

// hiddenSize() -> the model's n_embd: the length of a score job's hidden state rows.
Napi::Value Engine::HiddenSize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Vocab(env);
  return Napi::Number::New(env, llama_model_n_embd(model_));
}

// layerCount() -> the model's n_layer: a score job's hiddenLayers are -1 or 0..layerCount()-1.
Napi::Value Engine::LayerCount(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Vocab(env);
  return Napi::Number::New(env, llama_model_n_layer(model_));
}

// tokenize(text, addSpecial, parseSpecial) -> Int32Array. Synchronous: tokenizing is fast.
Napi::Value Engine::Tokenize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  args::Check(env, info.Length() == 3 && info[0].IsString() && info[1].IsBoolean() && info[2].IsBoolean(),
              "tokenize(text: string, addSpecial: boolean, parseSpecial: boolean)");
  const llama_vocab *vocab = Vocab(env);
  std::string text = info[0].As<Napi::String>();
  const bool add_special = info[1].As<Napi::Boolean>(), parse_special = info[2].As<Napi::Boolean>();
  std::vector<llama_token> tokens(text.size() + 8);
  int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), add_special, parse_special);
  }
  return TypedArrayFrom(env, tokens.data(), static_cast<size_t>(std::max(n, 0)));
}

// applyTemplate([{ role, content }], addAssistant) -> string, with the model's own chat template.
Napi::Value Engine::ApplyTemplate(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  args::Check(env, info.Length() == 2 && info[0].IsArray() && info[1].IsBoolean(),
              "applyTemplate(messages: { role, content }[], addAssistant: boolean)");
  Vocab(env);
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> roles, contents;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    args::Check(env, arr.Get(i).IsObject(), "applyTemplate: every message must be an object");
    Napi::Object m = arr.Get(i).As<Napi::Object>();
    roles.push_back(args::String(env, m, "message", "role"));
    contents.push_back(args::String(env, m, "message", "content"));
  }
  std::vector<llama_chat_message> chat;
  size_t total = 0;
  for (size_t i = 0; i < roles.size(); ++i) {
    chat.push_back({roles[i].c_str(), contents[i].c_str()});
    total += contents[i].size();
  }
  const bool add_assistant = info[1].As<Napi::Boolean>();
  const char *tmpl = llama_model_chat_template(model_, nullptr);
  std::vector<char> buf(total * 2 + 1024);
  int32_t n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), add_assistant, buf.data(),
                                        static_cast<int32_t>(buf.size()));
  if (n > static_cast<int32_t>(buf.size())) {
    buf.resize(static_cast<size_t>(n));
    n = llama_chat_apply_template(tmpl, chat.data(), chat.size(), add_assistant, buf.data(),
                                  static_cast<int32_t>(buf.size()));
  }
  args::Check(env, n >= 0, "the model's chat template is not supported");
  return Napi::String::New(env, buf.data(), static_cast<size_t>(n));
}

// submit({ kind: 'score', prefix, branches, options, and optionally hidden (+ hiddenLayers) })
// Either kind may say background: true, for a background slot (load's backgroundSlots).
// submit({ kind: 'spans', prefix, branches, source, stops, maxSpanTokens, maxSpans, and optionally
//          startTokens + startLengths + startPositions (+ startEnds), separator, inlineSeparator, none,
//          minListLogprob, joinNext + minJoinLogprob, closingTokens, forkWithin, firstOptions,
//          scoredBranches, branchMaxSpans, branchMaxSpanTokens, branchStarts (absent: that feature is off) })
//   -> { id, result: Promise<ScoreResult | SpanResult> }
Napi::Value Engine::Submit(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = args::Object(info, "submit(job)");
  const llama_vocab *vocab = Vocab(env);
  job_args::Submission s = job_args::ParseSubmit(
      env, o, {llama_vocab_n_tokens(vocab), llama_model_n_layer(model_), pool_->has_background()});
  return Enqueue(env, std::move(s.job), s.background);
}

// transcribe({ audio: Uint8Array, maxSeconds, language, wantPcm }) -> { id, result: Promise<TranscribeResult> }
// A job like submit()'s (cancel(id) works the same); bad audio rejects with code "invalid_audio"
// or "audio_too_long". The bytes are copied: the caller may reuse its buffer at once.
Napi::Value Engine::Transcribe(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = args::Object(info, "transcribe(job)");
  Vocab(env);
  args::Check(env, whisper_loaded_, "no whisper model is loaded: call loadWhisper() first");
  return Enqueue(env, job_args::ParseTranscribe(env, o));
}

// Queues a checked job on the slots: { id, result }.
Napi::Value Engine::Enqueue(Napi::Env env, Job &&job, bool background) {
  Completions<Engine>::Ticket t = completions_.add(env);
  pool_->submit(t.id, std::move(job), background);
  const Names &n = Names::Of(env);
  Napi::Object out = Napi::Object::New(env);
  out.Set(n.id.Value(), static_cast<double>(t.id));
  out.Set(n.result.Value(), t.promise);
  return out;
}

// tokenBytes(tokens) -> Int32Array: the UTF-8 byte length of each token's text, for offsets.
Napi::Value Engine::TokenBytes(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  args::Check(env, info.Length() == 1, "tokenBytes(tokens: Int32Array)");
  const llama_vocab *vocab = Vocab(env);
  Tokens tokens = job_args::TokenArray(env, info[0], "tokens", llama_vocab_n_tokens(vocab));
  Napi::Int32Array out = Napi::Int32Array::New(env, tokens.size());
  char buf[256];
  for (size_t i = 0; i < tokens.size(); ++i)
    out[i] = std::max(0, llama_token_to_piece(vocab, tokens[i], buf, sizeof buf, 0, false));
  return out;
}

// specialTokens() -> { eos, eot }: the ids that end a reply (-1 when the model has none).
Napi::Value Engine::SpecialTokens(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const llama_vocab *vocab = Vocab(env);
  Napi::Object out = Napi::Object::New(env);
  out.Set("eos", llama_vocab_eos(vocab));
  out.Set("eot", llama_vocab_eot(vocab));
  return out;
}

// cancel(id): a queued job settles as cancelled at once, a running one at its next graph node.
Napi::Value Engine::Cancel(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  args::Check(env, info.Length() == 1 && info[0].IsNumber(), "cancel(id: number)");
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
  out.Set("backgroundRunning", s.background_running);
  out.Set("backgroundQueued", s.background_queued);
  out.Set("completed", static_cast<double>(s.completed));
  out.Set("failed", static_cast<double>(s.failed));
  out.Set("cancelled", static_cast<double>(s.cancelled));
  out.Set("rejected", static_cast<double>(s.rejected));
  out.Set("promptCacheBytes", static_cast<double>(s.prompt_cache.bytes));
  out.Set("promptCachePrompts", static_cast<double>(s.prompt_cache.prompts));
  out.Set("promptCacheLoads", static_cast<double>(s.prompt_cache.loads));
  out.Set("promptCacheTokens", static_cast<double>(s.prompt_cache.tokens));
  out.Set("promptCacheBorrows", static_cast<double>(s.prompt_cache.borrows));
  out.Set("promptCacheBorrowedTokens", static_cast<double>(s.prompt_cache.borrowed));
  return out;
}

// close(): cancels what is queued or running (their promises reject with code "cancelled"),
// joins the slot threads and frees the models.
Napi::Value Engine::Close(const Napi::CallbackInfo &info) {
  Shutdown();
  return info.Env().Undefined();
}
