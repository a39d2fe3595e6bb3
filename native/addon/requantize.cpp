#include "requantize.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "llama.h"

namespace {

// The names the manifest uses: llama.cpp's mixtures (the type of each tensor chosen by its rules)
// and single tensor types.
const std::map<std::string, llama_ftype> kMixtures = {{"q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M}};
const std::map<std::string, ggml_type> kTypes = {{"q4_k", GGML_TYPE_Q4_K}};

class RequantizeWorker : public Napi::AsyncWorker {
 public:
  RequantizeWorker(Napi::Env env, std::string input, std::string output, llama_ftype mixture,
                   std::vector<std::pair<std::string, ggml_type>> tensors)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        input_(std::move(input)),
        output_(std::move(output)),
        mixture_(mixture),
        tensors_(std::move(tensors)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  // A tensor already in its target type is copied as it is; the others are quantized row by row
  // from their dequantized weights, so the bytes do not depend on the thread count or the machine.
  void Execute() override {
    std::vector<llama_model_tensor_override> overrides;
    for (const auto &[pattern, type] : tensors_) overrides.push_back({pattern.c_str(), type});
    overrides.push_back({nullptr, GGML_TYPE_COUNT});
    llama_model_quantize_params p = llama_model_quantize_default_params();
    p.ftype = mixture_;
    p.allow_requantize = true;
    p.tt_overrides = overrides.data();
    p.nthread = 0;  // every core: this runs once, at set-up
    if (llama_model_quantize(input_.c_str(), output_.c_str(), &p) != 0)
      SetError("llama_model_quantize failed for " + input_);
  }

  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error &e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string input_, output_;
  llama_ftype mixture_;
  std::vector<std::pair<std::string, ggml_type>> tensors_;
};

}  // namespace

// requantize({ input, output, mixture, tensors }) -> Promise<void>: writes `output`, `input`'s
// weights in llama.cpp's `mixture`, except that a tensor whose name matches a key of `tensors`
// (a regular expression) takes that key's type.
Napi::Value Requantize(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = args::Object(info, "requantize(options)");
  auto mixture = kMixtures.find(args::String(env, o, "options", "mixture"));
  args::Check(env, mixture != kMixtures.end(), "options.mixture must be 'q4_k_m'");
  Napi::Value t = o.Get("tensors");
  args::Check(env, t.IsObject(), "options.tensors must be an object");
  Napi::Object tensorTypes = t.As<Napi::Object>();
  std::vector<std::pair<std::string, ggml_type>> tensors;
  Napi::Array patterns = tensorTypes.GetPropertyNames();
  for (uint32_t i = 0; i < patterns.Length(); ++i) {
    const std::string pattern = patterns.Get(i).As<Napi::String>();
    auto type = kTypes.find(args::String(env, tensorTypes, "options.tensors", pattern.c_str()));
    args::Check(env, type != kTypes.end(), "options.tensors." + pattern + " must be 'q4_k'");
    tensors.emplace_back(pattern, type->second);
  }
  auto *worker = new RequantizeWorker(env, args::String(env, o, "options", "input"),
                                      args::String(env, o, "options", "output"), mixture->second, std::move(tensors));
  worker->Queue();
  return worker->Promise();
}
