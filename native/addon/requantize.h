// requantize(): a GGUF rewritten by llama.cpp's own quantizer, for the model store's `requantize`
// source (src/models/fetch.ts, fromRequantized).
#pragma once
#include <napi.h>

Napi::Value Requantize(const Napi::CallbackInfo &info);
