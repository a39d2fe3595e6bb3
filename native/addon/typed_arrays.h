// Copies between C++ vectors and JS typed arrays (Int32Array, Float32Array, Uint8Array...: the
// array type follows T). Main thread only. Both directions copy: a new array owns its own
// ArrayBuffer, and a vector read in does not alias the JS array, which JS may change later.
#pragma once
#include <napi.h>

#include <cstddef>
#include <cstring>
#include <vector>

// A new typed array of the n values at `data`.
template <class T>
Napi::TypedArrayOf<T> TypedArrayFrom(Napi::Env env, const T *data, size_t n) {
  Napi::TypedArrayOf<T> a = Napi::TypedArrayOf<T>::New(env, n);
  if (n != 0) std::memcpy(a.Data(), data, n * sizeof(T));
  return a;
}

template <class T>
Napi::TypedArrayOf<T> TypedArrayFrom(Napi::Env env, const std::vector<T> &v) {
  return TypedArrayFrom(env, v.data(), v.size());
}

template <class T>
std::vector<T> VectorFrom(const Napi::TypedArrayOf<T> &a) {
  return std::vector<T>(a.Data(), a.Data() + a.ElementLength());
}
