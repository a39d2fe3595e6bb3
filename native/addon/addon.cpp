// Module entry: the Engine, Encoder and SpeakerEncoder classes, requantize(), version information
// and the native log's threshold. The classes live in native/addon/*; what they run lives in native/core/,
// which never includes napi.h.
#include <napi.h>

#include <map>
#include <string>

#include "args.h"
#include "encoder.h"
#include "engine.h"
#include "log.h"
#include "names.h"
#include "requantize.h"
#include "whisper.h"

namespace {

Napi::Value Versions(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("whisper", whisper_version());
  out.Set("system", llama_print_system_info());
  return out;
}

// setLogLevel(level: 'debug' | 'info' | 'warn' | 'error' | 'silent'): the least severe line of
// llama.cpp's, ggml's and whisper.cpp's log that is printed (as a JSON line on stderr).
Napi::Value SetLogLevel(const Napi::CallbackInfo &info) {
  static const std::map<std::string, int> levels = {{"debug", GGML_LOG_LEVEL_DEBUG},
                                                    {"info", GGML_LOG_LEVEL_INFO},
                                                    {"warn", GGML_LOG_LEVEL_WARN},
                                                    {"error", GGML_LOG_LEVEL_ERROR},
                                                    {"silent", kLogNothing}};
  Napi::Env env = info.Env();
  auto level = info.Length() == 1 && info[0].IsString() ? levels.find(info[0].As<Napi::String>()) : levels.end();
  args::Check(env, level != levels.end(), "setLogLevel(level) expects 'debug', 'info', 'warn', 'error' or 'silent'");
  set_native_log_threshold(level->second);
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  route_native_log();
  llama_backend_init();
  env.SetInstanceData(new Names(env));
  exports.Set("Engine", Engine::Define(env));
  exports.Set("Encoder", DefineEncoder(env));
  exports.Set("SpeakerEncoder", DefineSpeakerEncoder(env));
  exports.Set("requantize", Napi::Function::New(env, Requantize));
  exports.Set("versions", Napi::Function::New(env, Versions));
  exports.Set("setLogLevel", Napi::Function::New(env, SetLogLevel));
  return exports;
}

}  // namespace

NODE_API_MODULE(decision_machine, Init)
