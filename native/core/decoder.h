// Decoder: one slot's llama_context with its prefix cache. The kernels (scoring, span copying)
// build token items and decode them through here. One thread per Decoder.
#pragma once
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cancelled.h"
#include "jobs.h"
#include "prompt_cache.h"

// Hidden states at a decode's output rows, copied by the context's eval callback while `on`: for
// each layer asked, the residual stream after that layer (the graph's "l_out-<il>") or, for -1,
// the final state after the output norm ("result_norm": the vector the logits are read from).
// (llama_set_embeddings would not do: it makes every token of a batch an output, each then costing
// its vocabulary projection.) With `on` false the callback asks for no tensor and the graph is
// computed in one go, as with no callback.
struct HiddenCapture {
  bool on = false;
  // Output o's rows, o in batch order: n_outputs x (layers x n_embd), layer k's row at
  // (o * layers.size() + k) * n_embd. Valid after a decode that check() passed.
  std::vector<float> rows;

  // Sets the context's eval callback to this capture (before the context is made).
  void install(llama_context_params &p) {
    p.cb_eval = eval;
    p.cb_eval_user_data = this;
  }
  // Captures `layers` during the next llama_decode of `batch` (n_outputs of its tokens have
  // logits set): sizes `rows` and turns `on`.
  void start(const std::vector<int32_t> &layers, const llama_batch &batch, int32_t n_outputs, int32_t n_embd);
  // After that decode: turns off, and throws std::runtime_error unless every layer's rows were
  // read once, from a tensor of the expected shape.
  void check();

 private:
  static bool eval(ggml_tensor *t, bool ask, void *self);
  void take(const ggml_tensor *t, int32_t il);

  const std::vector<int32_t> *layers_ = nullptr;
  const int8_t *is_output_ = nullptr;  // the batch's logits flags
  int32_t n_tokens_ = 0, n_outputs_ = 0, n_embd_ = 0;
  std::vector<int32_t> taken_;  // per layer asked: how many times its tensor was read
  std::string error_;           // the first tensor of an unexpected shape
};

class Decoder {
 public:
  static constexpr llama_seq_id kShared = -1;  // a prefix token: sequences 0..n_shared

  struct Item {
    llama_token token;
    llama_pos pos;
    llama_seq_id seq;  // or kShared
    int32_t want;      // index handed to on_logits, or -1 for no logits
  };

  // ctx must have been created with n_seq_max >= 3, a unified KV cache, room for n_outputs
  // logits rows per decode call and `hidden` installed. `prompts` (shared with the other slots,
  // may be null) keeps the prompts this slot moves away from.
  Decoder(llama_context *ctx, int32_t n_outputs, PromptCache *prompts, HiddenCapture *hidden);

  // Starts a job: keeps the longest cached part of `prefix` in sequence 0 (or loads a longer one
  // from `prompts`, first keeping there what sequence 0 held if `prefix` shares less than half of
  // it), then borrows what follows from a kept prompt that ends the same way (the same text after
  // other instructions), frees every other sequence, and returns the items that decode the rest
  // of the prefix (tagged kShared).
  std::vector<Item> begin(const Tokens &prefix);
  // The job succeeded: sequence 0 now holds `prefix` for the next job to reuse.
  // When the prompt cache lends texts, the prompt is kept there too, for another slot to borrow.
  void finish(const Tokens &prefix) {
    cached_ = prefix;
    if (prompts_ != nullptr && prompts_->borrows_texts()) prompts_->save(ctx_, prefix);
  }
  // The job failed or was aborted mid-way: forget everything.
  void reset();

  // Decodes items in chunks of at most n_batch tokens and n_outputs logits rows; after each
  // chunk calls on_logits(want, logits) for every item that wants them. An on_logits taking a
  // third argument gets there the item's hidden states of `layers` (as ScoreJob::hidden_layers,
  // without the default: layers x n_embd floats), null when `layers` is empty. Throws Cancelled
  // (the context's abort callback stopped the decode) or std::runtime_error.
  template <class OnLogits>
  void decode(const std::vector<Item> &items, int32_t n_shared, OnLogits on_logits,
              const std::vector<int32_t> &layers = {});

  // Decodes branches[g0..g1) on sequences 1..(g1 - g0), each continuing the prefix, and calls
  // on_last(b, logits) after each branch's last token (on_last(b, logits, rows) with `layers`, as
  // decode). `pending` holds prefix items begin() returned that are not decoded yet: they go into
  // the same llama_decode (tagged with every branch sequence) and are consumed.
  template <class OnLogits>
  void branches(std::vector<Item> &pending, const Tokens &prefix, const std::vector<Tokens> &branches, size_t g0,
                size_t g1, OnLogits on_last, const std::vector<int32_t> &layers = {});

  // log(sum(exp(logits))) over the vocabulary.
  float log_normalizer(const float *logits) const;

  int32_t cached() const { return static_cast<int32_t>(cached_.size() + borrowed_); }  // this job's, not prefilled
  const Tokens &cached_tokens() const { return cached_; }
  int32_t n_seq() const { return n_seq_; }
  int32_t n_embd() const { return n_embd_; }
  int32_t n_ctx() const { return n_ctx_; }
  llama_memory_t memory() const { return mem_; }

 private:
  void decode_chunk(const std::vector<Item> &items, size_t &next, int32_t n_shared, llama_batch &batch,
                    const std::vector<int32_t> &layers);

  llama_context *ctx_;
  PromptCache *prompts_;
  HiddenCapture *hidden_;
  llama_memory_t mem_;
  int32_t n_vocab_, n_batch_, n_seq_, n_ctx_, n_outputs_, n_embd_;
  Tokens cached_;        // the tokens held by sequence 0 after the last successful job
  size_t borrowed_ = 0;  // this job's prefix tokens whose KV came from another prompt
};

template <class OnLogits>
void Decoder::decode(const std::vector<Item> &items, int32_t n_shared, OnLogits on_logits,
                     const std::vector<int32_t> &layers) {
  llama_batch batch = llama_batch_init(n_batch_, 0, n_seq_);
  struct Free {
    llama_batch &b;
    ~Free() { llama_batch_free(b); }
  } free_batch{batch};
  size_t next = 0;
  while (next < items.size()) {
    const size_t start = next;
    decode_chunk(items, next, n_shared, batch, layers);
    const bool hidden = !layers.empty();
    const size_t width = layers.size() * static_cast<size_t>(n_embd_);
    const float *row = hidden_->rows.data();  // decode_chunk checked there are rows for every output
    for (int32_t k = 0; k < batch.n_tokens; ++k) {
      if (!batch.logits[k]) continue;
      const float *logits = llama_get_logits_ith(ctx_, k);
      if constexpr (std::is_invocable_v<OnLogits, int32_t, const float *, const float *>) {
        on_logits(items[start + k].want, logits, hidden ? row : nullptr);
        row += width;
      } else {
        on_logits(items[start + k].want, logits);
      }
    }
  }
}

template <class OnLogits>
void Decoder::branches(std::vector<Item> &pending, const Tokens &prefix, const std::vector<Tokens> &branches, size_t g0,
                       size_t g1, OnLogits on_last, const std::vector<int32_t> &layers) {
  std::vector<Item> items;
  items.swap(pending);
  const llama_pos p0 = static_cast<llama_pos>(prefix.size());
  for (size_t b = g0; b < g1; ++b) {
    const llama_seq_id seq = static_cast<llama_seq_id>(1 + b - g0);
    llama_memory_seq_cp(mem_, 0, seq, -1, -1);  // what sequence 0 already holds
    const Tokens &br = branches[b];
    for (size_t i = 0; i < br.size(); ++i)
      items.push_back({br[i], p0 + static_cast<llama_pos>(i), seq, i + 1 == br.size() ? static_cast<int32_t>(b) : -1});
  }
  decode(items, static_cast<int32_t>(g1 - g0), on_last, layers);
}
