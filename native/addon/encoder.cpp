#include "encoder.h"

#include <memory>

#include "args.h"
#include "completions.h"
#include "sentence_encoder.h"
#include "task_thread.h"
#include "typed_arrays.h"

namespace {

class EncoderWrap : public Napi::ObjectWrap<EncoderWrap> {
 public:
  explicit EncoderWrap(const Napi::CallbackInfo &info)
      : Napi::ObjectWrap<EncoderWrap>(info),
        completions_(info.Env(), this, "decision-machine-encoder", [this] { Stop(); }) {}

  ~EncoderWrap() override {
    if (completions_.torn_down()) return;
    Stop();
    completions_.release();
  }

  // load({ modelPath, threads, batchTokens, sequences }) -> Promise<{ dimensions, windowTokens }>
  Napi::Value Load(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Napi::Object o = args::Object(info, "load(options)");
    args::Check(env, !load_called_, "encoder is already loaded");
    const std::string path = args::String(env, o, "options", "modelPath");
    const SentenceEncoderConfig cfg{args::Int(env, o, "options", "threads", 1),
                                    args::Int(env, o, "options", "batchTokens", 8),
                                    args::Int(env, o, "options", "sequences", 1)};
    load_called_ = true;
    Completions<EncoderWrap>::Ticket t = completions_.add(env);
    worker_.post([this, id = t.id, path, cfg](bool run) {
      Outcome<std::pair<int32_t, int32_t>> out;
      Run(run, out, [&] {
        encoder_ = std::make_unique<SentenceEncoder>(path, cfg);
        out.result = {encoder_->dimensions(), encoder_->window_tokens()};
      });
      completions_.post(id, std::move(out), [](Napi::Env env, const std::pair<int32_t, int32_t> &shape) {
        Napi::Object info = Napi::Object::New(env);
        info.Set("dimensions", shape.first);
        info.Set("windowTokens", shape.second);
        return Napi::Value(info);
      });
    });
    return t.promise;
  }

  // embed(texts: string[]) -> Promise<Float32Array>: one unit vector per text, row after row.
  Napi::Value Embed(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    args::Check(env, info.Length() == 1 && info[0].IsArray(), "embed(texts) expects an array of strings");
    Napi::Array list = info[0].As<Napi::Array>();
    std::vector<std::string> texts;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      Napi::Value v = list.Get(i);
      args::Check(env, v.IsString(), "embed(texts) expects an array of strings");
      texts.push_back(v.As<Napi::String>());
    }
    Completions<EncoderWrap>::Ticket t = completions_.add(env);
    worker_.post([this, id = t.id, texts = std::move(texts)](bool run) {
      Outcome<std::vector<float>> out;
      Run(run, out, [&] {
        if (!encoder_) throw std::runtime_error("encoder is not loaded");
        out.result = encoder_->embed(texts);
      });
      completions_.post(id, std::move(out),
                        [](Napi::Env env, const std::vector<float> &v) { return Napi::Value(TypedArrayFrom(env, v)); });
    });
    return t.promise;
  }

  // close(): the task in hand finishes, queued ones reject with code "closed", the model is freed.
  Napi::Value Close(const Napi::CallbackInfo &info) {
    Stop();
    return info.Env().Undefined();
  }

 private:
  // Runs one task's work on the worker thread (or reports that the encoder closed first).
  template <class Result, class Work>
  static void Run(bool run, Outcome<Result> &out, Work work) {
    if (!run) {
      out.code = "closed";
      out.message = "encoder is closed";
      return;
    }
    try {
      work();
      out.status = Status::ok;
    } catch (const std::exception &e) {
      out.code = "encoder_error";
      out.message = e.what();
    }
  }

  void Stop() {
    worker_.stop();
    encoder_.reset();
  }

  Completions<EncoderWrap> completions_;
  TaskThread worker_;
  bool load_called_ = false;                  // main thread
  std::unique_ptr<SentenceEncoder> encoder_;  // worker thread (and Stop(), after it joined)
};

}  // namespace

Napi::Function DefineEncoder(Napi::Env env) {
  return EncoderWrap::DefineClass(env, "Encoder",
                                  {EncoderWrap::InstanceMethod<&EncoderWrap::Load>("load"),
                                   EncoderWrap::InstanceMethod<&EncoderWrap::Embed>("embed"),
                                   EncoderWrap::InstanceMethod<&EncoderWrap::Close>("close")});
}
