// Encoder: a small sentence encoder (BERT-style GGUF, llama.cpp embedding mode) on one worker
// thread of its own. It ranks windows of long texts, so it must never wait behind the decision
// slots; it is tiny (22M parameters) next to them. Results return through one thread-safe function.
#pragma once
#include <napi.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "llama.h"

struct EncoderTask;

class Encoder : public Napi::ObjectWrap<Encoder> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Encoder(const Napi::CallbackInfo &info);
  ~Encoder() override;

 private:
  static void Deliver(Napi::Env env, Napi::Function, Encoder *self, EncoderTask *task);

  Napi::Value Load(const Napi::CallbackInfo &info);
  Napi::Value Embed(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);

  Napi::Value Post(Napi::Env env, EncoderTask *task);
  void Work();
  void Stop();
  void RunLoad(EncoderTask &task);
  void RunEmbed(EncoderTask &task);

  Napi::TypedThreadSafeFunction<Encoder, EncoderTask, Deliver> tsfn_;
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<EncoderTask *> queue_;
  bool stopping_ = false;
  int pending_ = 0;  // main thread only
  bool torn_down_ = false;
  Napi::Env::CleanupHook<std::function<void()>> cleanup_;

  // Worker thread only.
  llama_model *model_ = nullptr;
  llama_context *ctx_ = nullptr;
  int dim_ = 0;
  int window_ = 0;  // tokens per text, the model's trained context
  int batch_ = 0;   // tokens per encode call
  int sequences_ = 0;
};
