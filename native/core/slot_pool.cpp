#include "slot_pool.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "audio_decode.h"
#include "batch_invariance.h"
#include "cancelled.h"
#include "openmp_team.h"
#include "scoring.h"
#include "span_kernel.h"
#include "thread_priority.h"
#include "transcribe.h"

struct SlotPool::Slot {
  llama_context *ctx = nullptr;
  HiddenCapture hidden;  // the context's eval callback reads and writes it on this slot's thread
  std::unique_ptr<Decoder> decoder;
  whisper_state *wstate = nullptr;     // made on the slot's first transcription
  whisper_vad_context *vad = nullptr;  // likewise, when a voice activity model is set
  std::thread thread;
  uint64_t job_id = 0;                       // 0 when idle; guarded by mu_
  int32_t reserved = 0;                      // queued jobs meant for this slot; guarded by mu_
  Tokens cached;                             // copy of the decoder's cached prefix; guarded by mu_
  std::shared_ptr<std::atomic<bool>> abort;  // the running job's flag; guarded by mu_
  std::atomic<bool> *abort_now = nullptr;    // read by llama's abort callback on this thread
};

SlotPool::SlotPool(llama_model *model, const SlotConfig &cfg, int32_t n_slots, int32_t n_background, Done done)
    : done_(std::move(done)),
      n_threads_(cfg.n_threads),
      n_request_(n_slots),
      prompts_(cfg.prompt_cache_bytes > 0 ? std::make_unique<PromptCache>(cfg.prompt_cache_bytes, cfg.borrow_texts)
                                          : nullptr) {
  for (int32_t i = 0; i < n_slots + n_background; ++i) {
    auto slot = std::make_unique<Slot>();
    llama_context_params p = llama_context_default_params();
    p.n_ctx = static_cast<uint32_t>(cfg.n_ctx);
    p.n_batch = p.n_ubatch = static_cast<uint32_t>(cfg.n_batch);
    p.n_seq_max = static_cast<uint32_t>(cfg.n_seq);
    // A background slot computes on one thread: no OpenMP team, so the request slots' teams keep
    // their full spin (openmp_team.h) while it runs.
    p.n_threads = p.n_threads_batch = background(i) ? 1 : cfg.n_threads;
    p.kv_unified = true;  // branches share the prefix's KV cells
    // Only the last token of a branch needs logits: one row per sequence, not a full
    // n_batch x n_vocab buffer (~300 MB per slot with a 150k vocabulary). llama.cpp needs >= n_seq.
    p.n_outputs_max = static_cast<uint32_t>(cfg.n_seq);
    p.no_perf = true;
    p.abort_callback = [](void *data) {
      auto *flag = *static_cast<std::atomic<bool> **>(data);
      return flag != nullptr && flag->load(std::memory_order_relaxed);
    };
    p.abort_callback_data = &slot->abort_now;
    slot->hidden.install(p);
    {
      BatchInvariantScope invariant;  // a probability is the same whatever else a decode holds
      slot->ctx = llama_init_from_model(model, p);
    }
    if (slot->ctx == nullptr) {
      for (auto &s : slots_) llama_free(s->ctx);
      throw std::runtime_error("could not create llama context for slot " + std::to_string(i));
    }
    slot->decoder = std::make_unique<Decoder>(slot->ctx, cfg.n_seq, prompts_.get(), &slot->hidden);
    slots_.push_back(std::move(slot));
  }
  counts_.slots = n_slots;
  for (int32_t i = 0; i < n_slots + n_background; ++i)
    slots_[i]->thread = std::thread([this, i] { work(*slots_[i], i); });
}

SlotPool::~SlotPool() {
  std::deque<Pending> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
    for (auto &s : slots_)
      if (s->abort) s->abort->store(true);
  }
  wake_.notify_all();
  for (auto &p : dropped) done_(p.id, JobOutcome{Status::cancelled, "cancelled", "engine closed", {}});
  for (auto &s : slots_) {
    if (s->thread.joinable()) s->thread.join();
    llama_free(s->ctx);
    if (s->wstate != nullptr) whisper_free_state(s->wstate);
    if (s->vad != nullptr) whisper_vad_free(s->vad);
  }
}

void SlotPool::set_whisper(whisper_context *ctx, const std::string &vad_path) {
  std::lock_guard<std::mutex> lock(mu_);
  whisper_ = ctx;
  vad_path_ = vad_path;
}

void SlotPool::submit(uint64_t id, Job &&job, bool background_job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    static const Tokens kNoPrefix;  // a transcription has no llama prefix to match
    const Tokens &prefix = std::visit(
        [](const auto &j) -> const Tokens & {
          if constexpr (std::is_same_v<std::decay_t<decltype(j)>, TranscribeJob>)
            return kNoPrefix;
          else
            return j.prefix;
        },
        job);
    int32_t best = -1;
    size_t best_len = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(slots_.size()); ++i) {
      const Slot &s = *slots_[i];
      if (background(i) != background_job || s.job_id != 0 || s.reserved != 0) continue;
      const size_t n = common_prefix(s.cached, prefix);
      if (best < 0 || n > best_len) best = i, best_len = n;
    }
    if (best >= 0) ++slots_[best]->reserved;
    queue_.push_back({id, std::move(job), std::make_shared<std::atomic<bool>>(false), best, background_job});
  }
  wake_.notify_all();
}

void SlotPool::cancel(uint64_t id) {
  Pending removed{0, {}, nullptr};
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->id == id) {
        removed = std::move(*it);
        queue_.erase(it);
        if (removed.slot >= 0) --slots_[removed.slot]->reserved;
        ++counts_.cancelled;
        break;
      }
    }
    if (removed.id == 0) {
      for (auto &s : slots_)
        if (s->job_id == id) s->abort->store(true);
      return;
    }
  }
  done_(id, JobOutcome{Status::cancelled, "cancelled", "cancelled", {}});
}

PoolStats SlotPool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  PoolStats s = counts_;
  s.queued = s.running = s.background_queued = s.background_running = 0;
  for (const Pending &p : queue_) ++(p.background ? s.background_queued : s.queued);
  for (int32_t i = 0; i < static_cast<int32_t>(slots_.size()); ++i)
    if (slots_[i]->job_id != 0) ++(background(i) ? s.background_running : s.running);
  if (prompts_) s.prompt_cache = prompts_->stats();
  return s;
}

void SlotPool::work(Slot &slot, int32_t index) {
  lower_this_thread_priority(background(index) ? kBackgroundNice : kInferenceNice);
  whisper_context *whisper = nullptr;
  std::string vad_path;
  for (;;) {
    Pending p{0, {}, nullptr};
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto next = queue_.end();
      wake_.wait(lock, [&] {
        next = std::find_if(queue_.begin(), queue_.end(), [&](const Pending &q) { return eligible(q, index); });
        return stopping_ || next != queue_.end();
      });
      if (stopping_) return;
      p = std::move(*next);
      queue_.erase(next);
      if (p.slot == index) --slot.reserved;
      slot.job_id = p.id;
      slot.abort = p.abort;
      whisper = whisper_;
      vad_path = vad_path_;
    }
    slot.abort_now = p.abort.get();
    JobOutcome out;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      Decoder &d = *slot.decoder;
      out.result = std::visit(
          [&](const auto &job) -> JobResult {
            using J = std::decay_t<decltype(job)>;
            if constexpr (std::is_same_v<J, ScoreJob>)
              return score_options(d, job);
            else if constexpr (std::is_same_v<J, SpanJob>)
              return copy_spans(d, job);
            else {
              if (whisper == nullptr) throw std::runtime_error("no transcription model is loaded");
              if (!vad_path.empty() && slot.vad == nullptr) slot.vad = load_vad(vad_path, n_threads_);
              if (!vad_path.empty() && slot.vad == nullptr)
                throw std::runtime_error("could not load the voice activity model");
              return transcribe(whisper, slot.wstate, slot.vad, job, n_threads_, p.abort.get());
            }
          },
          p.job);
      std::visit(
          [&](auto &r) {
            r.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          },
          out.result);
      out.status = Status::ok;
    } catch (const InvalidAudio &e) {
      out.status = Status::rejected;
      out.code = e.code;
      out.message = e.what();
    } catch (const Cancelled &) {
      // Partial state stays behind an aborted decode: start the next job clean.
      if (!std::holds_alternative<TranscribeJob>(p.job)) slot.decoder->reset();
      out.status = Status::cancelled;
      out.message = "cancelled";
    } catch (const std::exception &e) {
      slot.decoder->reset();
      out.status = Status::failed;
      out.code = "runner_error";
      out.message = e.what();
    }
    slot.abort_now = nullptr;
    release_openmp_team();
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.job_id = 0;
      slot.abort.reset();
      slot.cached = slot.decoder->cached_tokens();
      if (out.status == Status::ok)
        ++counts_.completed;
      else if (out.status == Status::cancelled)
        ++counts_.cancelled;
      else if (out.status == Status::rejected)
        ++counts_.rejected;
      else
        ++counts_.failed;
    }
    done_(p.id, std::move(out));
  }
}
