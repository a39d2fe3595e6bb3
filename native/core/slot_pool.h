// A fixed pool of inference slots. Each slot is one native thread with its own llama_context
// (and, once it has transcribed, its own whisper_state);
// jobs wait in one FIFO shared by the slots. A job that arrives while slots are idle goes to the
// idle slot whose prefix cache shares most of its prompt (same text, same instructions). The pool does no admission
// control: the caller decides how much to submit (the TypeScript engine refuses with 529 when it is full).
// Background slots (one thread each, at a background priority: thread_priority.h) take only
// background jobs, and the request slots never do: background work never holds a slot a request
// waits for, and the kernel gives it a small share of the CPU requests want.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jobs.h"
#include "prompt_cache.h"

struct whisper_context;
struct whisper_vad_context;

struct SlotConfig {
  int32_t n_ctx;              // tokens of KV cache per slot
  int32_t n_batch;            // tokens per llama_decode call
  int32_t n_seq;              // sequences per slot (branches decoded side by side)
  int32_t n_threads;          // CPU threads per slot
  size_t prompt_cache_bytes;  // host memory for the prompts the slots moved away from; 0: none
  bool borrow_texts;          // texts read under other instructions are borrowed (PromptCache::borrow)
};

struct PoolStats {
  int32_t slots, running, queued;  // request slots and their jobs
  int32_t background_running, background_queued;
  uint64_t completed, failed, cancelled, rejected;
  PromptCache::Stats prompt_cache;  // all zero when the cache is off
};

class SlotPool {
 public:
  // Called on a slot thread when a job ends, exactly once per submitted job.
  using Done = std::function<void(uint64_t id, JobOutcome &&)>;

  // Creates every slot's context up front (n_slots request slots, then n_background background
  // slots); throws std::runtime_error if one cannot be created.
  SlotPool(llama_model *model, const SlotConfig &cfg, int32_t n_slots, int32_t n_background, Done done);
  // Cancels queued and running jobs (each still gets its Done call) and joins the threads.
  ~SlotPool();

  // The whisper model transcription jobs use (owned by the caller, outlives the pool) and the
  // voice activity model's file ("" for none). Each slot makes its own whisper_state and voice
  // activity context on its first transcription.
  void set_whisper(whisper_context *ctx, const std::string &vad_path);

  // Queues `job` under the caller's id (unique among the pool's jobs), for a request slot or, with
  // `background`, a background slot.
  void submit(uint64_t id, Job &&job, bool background = false);
  // Queued: removed and finished as cancelled. Running: its decode aborts at the next graph node.
  void cancel(uint64_t id);
  PoolStats stats();
  bool has_background() const { return static_cast<int32_t>(slots_.size()) > n_request_; }

 private:
  struct Pending {
    uint64_t id;
    Job job;
    std::shared_ptr<std::atomic<bool>> abort;
    int32_t slot = -1;  // the idle slot it was meant for (its cache holds the longest prefix), or -1
    bool background = false;
  };
  struct Slot;
  void work(Slot &slot, int32_t index);
  bool background(int32_t index) const { return index >= n_request_; }
  bool eligible(const Pending &p, int32_t index) const {
    return p.background == background(index) && (p.slot < 0 || p.slot == index);
  }

  Done done_;
  int32_t n_threads_;
  int32_t n_request_;                     // slots_[0, n_request_) take requests' jobs, the rest background jobs
  std::unique_ptr<PromptCache> prompts_;  // shared by the slots' decoders; null when off
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  std::vector<std::unique_ptr<Slot>> slots_;
  bool stopping_ = false;
  whisper_context *whisper_ = nullptr;
  std::string vad_path_;
  PoolStats counts_{};
};
