// The JS classes of the two small encoders, each on a TaskThread of its own so that it never waits
// behind the decision slots; answers come back through Completions like the engine's.
#pragma once
#include <napi.h>

// Encoder: the sentence encoder (core/sentence_encoder.h).
Napi::Function DefineEncoder(Napi::Env env);
// SpeakerEncoder: the CAM++ speaker encoder (core/campplus.h).
Napi::Function DefineSpeakerEncoder(Napi::Env env);
