// The one way work on native threads (slots, model loads, the encoders) answers JavaScript.
// On the main thread add() hands out an id and the promise for it; the thread doing the work
// later calls post(id, outcome) exactly once, from any thread, with plain C++ values only; one
// thread-safe function then settles the promise on the main thread: a success through the
// poster's `to_js`, anything else as an Error whose `code` names it ("cancelled" for a
// cancellation, otherwise the outcome's code). While a promise is pending the event loop stays
// alive and the owning JS object reachable; idle, neither.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "jobs.h"

inline Napi::Error CodedError(Napi::Env env, const std::string &code, const std::string &message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

template <class Owner>
class Completions {
 public:
  struct Ticket {
    uint64_t id;
    Napi::Promise promise;
  };

  // `owner` is the ObjectWrap holding this; `teardown` stops its threads when the environment is
  // torn down before (or without) the owner's finalizer, as at process exit.
  Completions(Napi::Env env, Owner *owner, const char *name, std::function<void()> teardown)
      : env_(env), owner_(owner) {
    tsfn_ = Tsfn::New(env, name, 0, 1, this);
    tsfn_.Unref(env);
    cleanup_ = env.AddCleanupHook(std::function<void()>([this, teardown = std::move(teardown)] {
      torn_down_ = true;
      teardown();
    }));
  }

  // Whether the environment is gone: the owner's finalizer then has nothing left to stop.
  bool torn_down() const { return torn_down_; }

  // For the owner's finalizer, after it stopped its threads (nothing is pending then: pending
  // work keeps the owner reachable).
  void release() {
    if (released_ || torn_down_) return;
    released_ = true;
    cleanup_.Remove(env_);
    tsfn_.Release();
  }
  ~Completions() { release(); }  // an owner whose constructor threw
  Completions(const Completions &) = delete;
  Completions &operator=(const Completions &) = delete;

  // Main thread. `keep` (optional) stays referenced until the promise settles: input the worker
  // reads in place.
  Ticket add(Napi::Env env, Napi::Object keep = Napi::Object()) {
    const uint64_t id = next_id_++;
    Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
    Waiting w{deferred, keep.IsEmpty() ? Napi::ObjectReference() : Napi::Persistent(keep)};
    waiting_.emplace(id, std::move(w));
    if (waiting_.size() == 1) {
      tsfn_.Ref(env);
      owner_->Ref();
    }
    return {id, deferred.Promise()};
  }

  // Any thread, once per id. `to_js(env, result)` runs on the main thread for a success.
  template <class Result, class ToJs>
  void post(uint64_t id, Outcome<Result> &&outcome, ToJs to_js) {
    auto *p = new Posted{id, outcome.status, std::move(outcome.code), std::move(outcome.message), {}};
    if (outcome.status == Status::ok) {
      auto result = std::make_shared<Result>(std::move(outcome.result));
      p->value = [result, to_js](Napi::Env env) { return to_js(env, *result); };
    }
    if (tsfn_.BlockingCall(p) != napi_ok) delete p;  // the environment is being torn down
  }

 private:
  struct Posted {
    uint64_t id;
    Status status;
    std::string code, message;
    std::function<Napi::Value(Napi::Env)> value;  // set when status == ok
  };
  struct Waiting {
    Napi::Promise::Deferred deferred;
    Napi::ObjectReference keep;
  };

  static void Deliver(Napi::Env env, Napi::Function, Completions *self, Posted *p) {
    std::unique_ptr<Posted> posted(p);
    if (env != nullptr) self->Settle(env, *posted);
  }

  void Settle(Napi::Env env, Posted &p) {
    auto it = waiting_.find(p.id);
    if (it == waiting_.end()) return;
    Napi::Promise::Deferred deferred = it->second.deferred;
    waiting_.erase(it);
    Napi::HandleScope scope(env);
    if (p.status == Status::ok) {
      deferred.Resolve(p.value(env));
    } else {
      const std::string code = p.status == Status::cancelled ? "cancelled" : p.code;
      deferred.Reject(CodedError(env, code, p.message).Value());
    }
    if (waiting_.empty()) {
      tsfn_.Unref(env);
      owner_->Unref();
    }
  }

  using Tsfn = Napi::TypedThreadSafeFunction<Completions, Posted, Deliver>;
  Napi::Env env_;
  Owner *owner_;
  Tsfn tsfn_;
  std::unordered_map<uint64_t, Waiting> waiting_;
  uint64_t next_id_ = 1;
  bool torn_down_ = false;
  bool released_ = false;
  Napi::Env::CleanupHook<std::function<void()>> cleanup_;
};
