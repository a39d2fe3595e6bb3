// Argument checks of every N-API entry point, in one style: a check that fails throws a
// TypeError naming the argument or field, what it must be; nothing is defaulted (src/binding.ts
// passes every setting). The addon is built with C++ exceptions (NAPI_CPP_EXCEPTIONS): a thrown
// Napi::Error reaches the JavaScript caller.
#pragma once
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "typed_arrays.h"

namespace args {

inline void Check(Napi::Env env, bool ok, const std::string &message) {
  if (!ok) throw Napi::TypeError::New(env, message);
}

inline bool IsArrayOf(const Napi::Value &v, napi_typedarray_type type) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == type;
}

// The single options / job object of a call like `load(options)`.
inline Napi::Object Object(const Napi::CallbackInfo &info, const char *signature) {
  Check(info.Env(), info.Length() == 1 && info[0].IsObject(), std::string(signature) + " expects an object");
  return info[0].As<Napi::Object>();
}

inline std::string String(Napi::Env env, const Napi::Object &o, const char *where, const char *key) {
  Napi::Value v = o.Get(key);
  Check(env, v.IsString(), std::string(where) + "." + key + " must be a string");
  return v.As<Napi::String>();
}

inline double Number(Napi::Env env, const Napi::Object &o, const char *where, const char *key) {
  Napi::Value v = o.Get(key);
  Check(env, v.IsNumber(), std::string(where) + "." + key + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

inline bool Bool(Napi::Env env, const Napi::Object &o, const char *where, const char *key) {
  Napi::Value v = o.Get(key);
  Check(env, v.IsBoolean(), std::string(where) + "." + key + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

// An integer in [min, max].
inline int32_t Int(Napi::Env env, const Napi::Object &o, const char *where, const char *key, int32_t min,
                   int32_t max = INT32_MAX) {
  const double x = Number(env, o, where, key);
  Check(env, std::isfinite(x) && std::floor(x) == x && x >= min && x <= max,
        std::string(where) + "." + key + " must be an integer from " + std::to_string(min) +
            (max == INT32_MAX ? " up" : " to " + std::to_string(max)));
  return static_cast<int32_t>(x);
}

inline std::vector<int32_t> Int32s(Napi::Env env, const Napi::Value &v, const std::string &name) {
  Check(env, IsArrayOf(v, napi_int32_array), name + " must be an Int32Array");
  return VectorFrom(v.As<Napi::Int32Array>());
}

}  // namespace args
