// Engine: the JS class. Owns one llama_model and its SlotPool. Every method runs on the JS
// main thread; slot threads report back through one thread-safe function, never by blocking.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>

#include "slot_pool.h"
#include "whisper.h"

struct Completion;

class Engine : public Napi::ObjectWrap<Engine> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Engine(const Napi::CallbackInfo &info);
  ~Engine() override;

  // Runs on the main thread for every message a slot or the loader posted.
  void Finish(Napi::Env env, Completion *c);

 private:
  static void Deliver(Napi::Env env, Napi::Function, Engine *engine, Completion *c);

  Napi::Value Load(const Napi::CallbackInfo &info);
  Napi::Value LoadWhisper(const Napi::CallbackInfo &info);
  Napi::Value Transcribe(const Napi::CallbackInfo &info);
  Napi::Value Info(const Napi::CallbackInfo &info);
  Napi::Value Tokenize(const Napi::CallbackInfo &info);
  Napi::Value ApplyTemplate(const Napi::CallbackInfo &info);
  Napi::Value Submit(const Napi::CallbackInfo &info);
  Napi::Value Cancel(const Napi::CallbackInfo &info);
  Napi::Value TokenBytes(const Napi::CallbackInfo &info);
  Napi::Value SpecialTokens(const Napi::CallbackInfo &info);
  std::vector<Tokens> TokenLists(Napi::Env env, const Napi::Object &o, const char *key);
  Tokens TokenArray(Napi::Env env, Napi::Value v, const char *key);
  Napi::Value Stats(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);

  void Hold(Napi::Env env);
  void Release(Napi::Env env);
  void Shutdown();
  const llama_vocab *Vocab(Napi::Env env);

  Napi::TypedThreadSafeFunction<Engine, Completion, Deliver> tsfn_;
  llama_model *model_ = nullptr;
  whisper_context *whisper_ = nullptr;  // the transcription model, once loadWhisper finished
  std::unique_ptr<SlotPool> pool_;
  std::thread loader_;
  std::unordered_map<uint64_t, Napi::Promise::Deferred> waiting_;  // job id (0 = load) -> promise
  int pending_ = 0;
  bool loaded_ = false;
  bool torn_down_ = false;  // the environment's cleanup hook ran (process exit)  // main-thread view: set when the load completion is delivered
  Napi::Env::CleanupHook<std::function<void()>> cleanup_;
};
