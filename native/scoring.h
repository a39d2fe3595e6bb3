// The option-scoring kernel: runs one ScoreJob on one llama_context (owned by a slot thread).
#pragma once
#include <stdexcept>

#include "jobs.h"

// Thrown when the job's abort flag stopped llama_decode (client went away).
struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("cancelled") {}
};

class Scorer {
 public:
  // ctx must have been created with n_seq_max >= 3, a unified KV cache and room for n_outputs
  // logits rows per decode call.
  Scorer(llama_context *ctx, int32_t n_outputs);

  // Runs the job; throws Aborted or std::runtime_error. Not thread-safe: one caller per context.
  ScoreResult run(const ScoreJob &job);

 private:
  static constexpr llama_seq_id kShared = -1;  // a prefix token: sequences 0..n_shared
  struct Item {
    llama_token token;
    llama_pos pos;
    llama_seq_id seq;  // or kShared
    int32_t want;      // index handed to on_logits, or -1 for no logits
  };
  template <class OnLogits>
  void decode(const std::vector<Item> &items, int32_t n_shared, OnLogits on_logits);
  void reuse_prefix(const Tokens &prefix);
  float log_normalizer(const float *logits) const;

  llama_context *ctx_;
  int32_t n_outputs_;
  llama_memory_t mem_;
  int32_t n_vocab_;
  int32_t n_batch_;
  int32_t n_seq_;
  Tokens cached_;  // the tokens held by sequence 0 after the last successful job
};
