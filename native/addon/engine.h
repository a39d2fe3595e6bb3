// Engine: the JS class over one llama_model, its SlotPool and (once loaded) a whisper model.
// Every method runs on the JS main thread: it checks its arguments, builds a plain job (job_args.h,
// core/jobs.h) and hands it to a slot or to the loader thread; answers come back through the
// engine's Completions (job_results.h).
#pragma once
#include <napi.h>

#include <memory>

#include "completions.h"
#include "slot_pool.h"
#include "task_thread.h"
#include "whisper.h"

class Engine : public Napi::ObjectWrap<Engine> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Engine(const Napi::CallbackInfo &info);
  ~Engine() override;

 private:
  Napi::Value Load(const Napi::CallbackInfo &info);
  Napi::Value LoadWhisper(const Napi::CallbackInfo &info);
  Napi::Value Info(const Napi::CallbackInfo &info);
  Napi::Value HiddenSize(const Napi::CallbackInfo &info);
  Napi::Value LayerCount(const Napi::CallbackInfo &info);
  Napi::Value Tokenize(const Napi::CallbackInfo &info);
  Napi::Value ApplyTemplate(const Napi::CallbackInfo &info);
  Napi::Value Submit(const Napi::CallbackInfo &info);
  Napi::Value Transcribe(const Napi::CallbackInfo &info);
  Napi::Value Cancel(const Napi::CallbackInfo &info);
  Napi::Value TokenBytes(const Napi::CallbackInfo &info);
  Napi::Value SpecialTokens(const Napi::CallbackInfo &info);
  Napi::Value Stats(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);

  Napi::Value Enqueue(Napi::Env env, Job &&job, bool background = false);
  const llama_vocab *Vocab(Napi::Env env);
  void Shutdown();

  Completions<Engine> completions_;
  TaskThread loader_;                   // model loads, one after another
  bool load_called_ = false;            // main thread: one load() per engine
  bool loaded_ = false;                 // main thread: load() resolved; model_ and pool_ are set
  bool whisper_called_ = false;         // main thread: one loadWhisper() per engine
  bool whisper_loaded_ = false;         // main thread: loadWhisper() resolved
  llama_model *model_ = nullptr;        // written by the loader, read once loaded_
  whisper_context *whisper_ = nullptr;  // likewise, once whisper_loaded_
  std::unique_ptr<SlotPool> pool_;
};
