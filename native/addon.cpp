// Module entry: the Engine and Encoder classes, version information and llama.cpp's log routing.
#include <napi.h>

#include <cstdio>
#include <cstdlib>

#include "encoder.h"
#include "engine.h"
#include "speaker_encoder.h"
#include "whisper.h"

namespace {

// llama.cpp and ggml log a lot at load time; only errors reach stderr unless DM_NATIVE_LOG=1.
void Log(ggml_log_level level, const char *text, void *) {
  static const bool verbose = std::getenv("DM_NATIVE_LOG") != nullptr;
  if (verbose || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

Napi::Value Versions(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("whisper", whisper_version());
  out.Set("system", llama_print_system_info());
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  llama_log_set(Log, nullptr);
  whisper_log_set(Log, nullptr);
  llama_backend_init();
  exports.Set("Engine", Engine::Define(env));
  exports.Set("Encoder", Encoder::Define(env));
  exports.Set("SpeakerEncoder", DefineSpeakerEncoder(env));
  exports.Set("versions", Napi::Function::New(env, Versions));
  return exports;
}

}  // namespace

NODE_API_MODULE(decision_machine, Init)
