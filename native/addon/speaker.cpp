// The JS class SpeakerEncoder (typed in src/binding.ts):
//   new SpeakerEncoder(weights: Uint8Array)    parses a DMSPKCAM (CAM++) file's bytes
//   .dims: { mels, embedding, partialFrames, maxPartialFrames }
//   .embed(pcm: Float32Array, starts: Int32Array, lengths: Int32Array, gain: number): Promise<Float32Array>
// embed runs on the encoder's own TaskThread, one call after another. It reads `pcm` in place
// (an hour is 230 MB): the caller must not change it until the promise settles.
#include <memory>

#include "args.h"
#include "campplus.h"
#include "completions.h"
#include "encoder.h"
#include "task_thread.h"
#include "typed_arrays.h"

namespace {

class SpeakerEncoderWrap : public Napi::ObjectWrap<SpeakerEncoderWrap> {
 public:
  explicit SpeakerEncoderWrap(const Napi::CallbackInfo &info)
      : Napi::ObjectWrap<SpeakerEncoderWrap>(info),
        encoder_(Parse(info)),
        completions_(info.Env(), this, "decision-machine-speaker", [this] { worker_.stop(); }) {
    Napi::Env env = info.Env();
    const speaker::Dims &d = encoder_->dims();
    Napi::Object dims = Napi::Object::New(env);
    dims.Set("mels", d.mels);
    dims.Set("embedding", d.embedding);
    dims.Set("partialFrames", speaker::kPartialFrames);
    dims.Set("maxPartialFrames", speaker::kMaxPartialFrames);
    info.This().As<Napi::Object>().Set("dims", dims);
  }

  ~SpeakerEncoderWrap() override {
    if (completions_.torn_down()) return;
    worker_.stop();
    completions_.release();
  }

  static std::unique_ptr<const speaker::CamPlus> Parse(const Napi::CallbackInfo &info) {
    args::Check(info.Env(), info.Length() == 1 && args::IsArrayOf(info[0], napi_uint8_array),
                "SpeakerEncoder expects the model file's bytes as a Uint8Array");
    Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
    try {
      return std::make_unique<const speaker::CamPlus>(bytes.Data(), bytes.ByteLength());
    } catch (const std::exception &e) {
      throw CodedError(info.Env(), "load_failed", std::string("speaker model: ") + e.what());
    }
  }

  Napi::Value Embed(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    args::Check(env,
                info.Length() == 4 && args::IsArrayOf(info[0], napi_float32_array) &&
                    args::IsArrayOf(info[1], napi_int32_array) && args::IsArrayOf(info[2], napi_int32_array) &&
                    info[3].IsNumber(),
                "embed(pcm: Float32Array, starts: Int32Array, lengths: Int32Array, gain: number)");
    const double gain = info[3].As<Napi::Number>().DoubleValue();
    args::Check(env, gain > 0 && gain < 1e6, "embed: gain must be a positive finite number");
    Napi::Float32Array pcm = info[0].As<Napi::Float32Array>();
    std::vector<int32_t> starts = args::Int32s(env, info[1], "starts"), lengths = args::Int32s(env, info[2], "lengths");
    args::Check(env, starts.size() == lengths.size(), "embed: starts and lengths differ in length");
    for (size_t i = 0; i < starts.size(); i++) {
      args::Check(env, starts[i] >= 0 && lengths[i] >= 1 && lengths[i] <= speaker::kMaxPartialFrames,
                  "embed: partial " + std::to_string(i) + " needs start >= 0 and length 1.." +
                      std::to_string(speaker::kMaxPartialFrames));
    }
    Completions<SpeakerEncoderWrap>::Ticket t = completions_.add(env, pcm);  // keeps the audio alive
    const speaker::CamPlus *encoder = encoder_.get();
    worker_.post([this, encoder, id = t.id, data = pcm.Data(), samples = pcm.ElementLength(), gain,
                  starts = std::move(starts), lengths = std::move(lengths)](bool run) {
      Outcome<std::vector<float>> out;
      if (!run) {
        out.code = "closed";
        out.message = "speaker encoder is closed";
      } else {
        try {
          out.result.resize(starts.size() * static_cast<size_t>(encoder->dims().embedding));
          encoder->embed(data, samples, static_cast<float>(gain), starts.data(), lengths.data(), starts.size(),
                         out.result.data());
          out.status = Status::ok;
        } catch (const std::exception &e) {
          out.code = "runner_error";
          out.message = e.what();
        }
      }
      completions_.post(id, std::move(out),
                        [](Napi::Env env, const std::vector<float> &v) { return Napi::Value(TypedArrayFrom(env, v)); });
    });
    return t.promise;
  }

 private:
  std::unique_ptr<const speaker::CamPlus> encoder_;  // immutable; first, so a bad file throws before the rest
  Completions<SpeakerEncoderWrap> completions_;
  TaskThread worker_;
};

}  // namespace

Napi::Function DefineSpeakerEncoder(Napi::Env env) {
  return SpeakerEncoderWrap::DefineClass(env, "SpeakerEncoder",
                                         {SpeakerEncoderWrap::InstanceMethod<&SpeakerEncoderWrap::Embed>("embed")});
}
