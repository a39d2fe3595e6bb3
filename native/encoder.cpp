#include "encoder.h"

#include <algorithm>
#include <cmath>

#include "thread_priority.h"

// One unit of work for the worker thread and its answer for the main thread.
struct EncoderTask {
  enum Kind { load, embed } kind;
  Napi::Promise::Deferred deferred;
  std::string path;                // load
  int threads = 1;                 // load
  std::vector<std::string> texts;  // embed
  std::vector<float> vectors;      // embed: texts.size() x dim, unit length
  std::string error;               // empty on success
};

namespace {

constexpr int kSequences = 4;  // texts encoded together in one call
constexpr int kBatchTokens = 512;

Napi::Error CodedError(Napi::Env env, const char *code, const std::string &message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

}  // namespace

Napi::Function Encoder::Define(Napi::Env env) {
  return DefineClass(env, "Encoder",
                     {InstanceMethod("load", &Encoder::Load), InstanceMethod("embed", &Encoder::Embed),
                      InstanceMethod("close", &Encoder::Close)});
}

Encoder::Encoder(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Encoder>(info) {
  Napi::Env env = info.Env();
  tsfn_ = Napi::TypedThreadSafeFunction<Encoder, EncoderTask, Deliver>::New(env, "decision-machine-encoder", 0, 1, this);
  tsfn_.Unref(env);  // referenced only while a task is pending
  worker_ = std::thread([this] { Work(); });
  cleanup_ = env.AddCleanupHook(std::function<void()>([this] {
    torn_down_ = true;
    Stop();
  }));
}

Encoder::~Encoder() {
  if (torn_down_) return;
  cleanup_.Remove(Env());
  Stop();
  tsfn_.Release();
}

// Finishes the task in hand, frees the model. Queued tasks are dropped: close() has settled them
// already; at environment teardown their promises die with it.
void Encoder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  for (EncoderTask *t : queue_) delete t;
  queue_.clear();
  if (ctx_ != nullptr) llama_free(ctx_);
  if (model_ != nullptr) llama_model_free(model_);
  ctx_ = nullptr;
  model_ = nullptr;
}

Napi::Value Encoder::Post(Napi::Env env, EncoderTask *task) {
  Napi::Promise promise = task->deferred.Promise();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      task->deferred.Reject(CodedError(env, "closed", "encoder is closed").Value());
      delete task;
      return promise;
    }
    queue_.push_back(task);
  }
  if (pending_++ == 0) {
    tsfn_.Ref(env);
    Ref();
  }
  wake_.notify_one();
  return promise;
}

void Encoder::Deliver(Napi::Env env, Napi::Function, Encoder *self, EncoderTask *task) {
  if (env != nullptr) {
    Napi::HandleScope scope(env);
    if (!task->error.empty()) {
      task->deferred.Reject(CodedError(env, "encoder_error", task->error).Value());
    } else if (task->kind == EncoderTask::load) {
      Napi::Object info = Napi::Object::New(env);
      info.Set("dimensions", self->dim_);
      info.Set("windowTokens", self->window_);
      task->deferred.Resolve(info);
    } else {
      Napi::Float32Array out = Napi::Float32Array::New(env, task->vectors.size());
      std::copy(task->vectors.begin(), task->vectors.end(), out.Data());
      task->deferred.Resolve(out);
    }
    if (--self->pending_ == 0) {
      self->tsfn_.Unref(env);
      self->Unref();
    }
  }
  delete task;
}

void Encoder::Work() {
  lower_this_thread_priority();
  for (;;) {
    EncoderTask *task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = queue_.front();
      queue_.pop_front();
    }
    try {
      if (task->kind == EncoderTask::load) RunLoad(*task);
      else RunEmbed(*task);
    } catch (const std::exception &e) {
      task->error = e.what();
    }
    tsfn_.BlockingCall(task);
  }
}

// load(path, threads) -> Promise<{ dimensions, windowTokens }>
Napi::Value Encoder::Load(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() != 2 || !info[0].IsString() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "load(path, threads) expects a string and a number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto *task = new EncoderTask{EncoderTask::load, Napi::Promise::Deferred::New(env)};
  task->path = info[0].As<Napi::String>();
  task->threads = std::max(1, info[1].As<Napi::Number>().Int32Value());
  return Post(env, task);
}

void Encoder::RunLoad(EncoderTask &task) {
  if (model_ != nullptr) throw std::runtime_error("encoder is already loaded");
  llama_model_params mp = llama_model_default_params();
  model_ = llama_model_load_from_file(task.path.c_str(), mp);
  if (model_ == nullptr) throw std::runtime_error("could not load encoder model " + task.path);
  dim_ = llama_model_n_embd(model_);
  window_ = std::min(llama_model_n_ctx_train(model_), kBatchTokens);
  batch_ = kBatchTokens;
  sequences_ = kSequences;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = batch_;
  cp.n_batch = batch_;
  cp.n_ubatch = batch_;  // a non-causal model sees a whole text in one micro-batch
  cp.n_seq_max = sequences_;
  cp.n_threads = cp.n_threads_batch = task.threads;
  cp.embeddings = true;
  cp.pooling_type = LLAMA_POOLING_TYPE_MEAN;
  ctx_ = llama_init_from_model(model_, cp);
  if (ctx_ == nullptr) throw std::runtime_error("could not create the encoder context");
}

// embed(texts: string[]) -> Promise<Float32Array>: one unit vector per text, row after row.
// A text longer than the model's window is cut to it: callers send windows, not documents.
Napi::Value Encoder::Embed(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsArray()) {
    Napi::TypeError::New(env, "embed(texts) expects an array of strings").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Array list = info[0].As<Napi::Array>();
  auto *task = new EncoderTask{EncoderTask::embed, Napi::Promise::Deferred::New(env)};
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value v = list.Get(i);
    if (!v.IsString()) {
      delete task;
      Napi::TypeError::New(env, "embed(texts) expects an array of strings").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    task->texts.push_back(v.As<Napi::String>());
  }
  return Post(env, task);
}

void Encoder::RunEmbed(EncoderTask &task) {
  if (ctx_ == nullptr) throw std::runtime_error("encoder is not loaded");
  const llama_vocab *vocab = llama_model_get_vocab(model_);
  std::vector<std::vector<llama_token>> tokens;
  for (const std::string &text : task.texts) {
    std::vector<llama_token> t(text.size() + 3);
    int n = llama_tokenize(vocab, text.data(), (int32_t)text.size(), t.data(), (int32_t)t.size(), true, false);
    if (n < 0) throw std::runtime_error("encoder tokenizer failed");
    t.resize(std::min(n, window_));
    tokens.push_back(std::move(t));
  }
  task.vectors.assign(tokens.size() * dim_, 0.0f);
  llama_batch batch = llama_batch_init(batch_, 0, 1);
  size_t next = 0;
  while (next < tokens.size()) {
    // Fill one call with whole texts: up to `sequences_` of them and `batch_` tokens.
    batch.n_tokens = 0;
    size_t first = next;
    while (next < tokens.size() && (int)(next - first) < sequences_ &&
           batch.n_tokens + (int)tokens[next].size() <= batch_) {
      const int seq = (int)(next - first);
      for (size_t p = 0; p < tokens[next].size(); ++p) {
        const int i = batch.n_tokens++;
        batch.token[i] = tokens[next][p];
        batch.pos[i] = (llama_pos)p;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = seq;
        batch.logits[i] = true;
      }
      ++next;
    }
    if (llama_decode(ctx_, batch) != 0) {
      llama_batch_free(batch);
      throw std::runtime_error("encoder decode failed");
    }
    for (size_t t = first; t < next; ++t) {
      const float *e = llama_get_embeddings_seq(ctx_, (llama_seq_id)(t - first));
      if (e == nullptr) {
        llama_batch_free(batch);
        throw std::runtime_error("encoder returned no embedding");
      }
      double norm = 0;
      for (int d = 0; d < dim_; ++d) norm += (double)e[d] * e[d];
      const float scale = norm > 0 ? (float)(1.0 / std::sqrt(norm)) : 0.0f;
      for (int d = 0; d < dim_; ++d) task.vectors[t * dim_ + d] = e[d] * scale;
    }
  }
  llama_batch_free(batch);
}

// close(): queued work is refused from now on; the model is freed once the current task ends.
Napi::Value Encoder::Close(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::deque<EncoderTask *> queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued.swap(queue_);
  }
  for (EncoderTask *t : queued) {
    t->error = "encoder is closed";
    Deliver(env, Napi::Function(), this, t);
  }
  Stop();
  return env.Undefined();
}
