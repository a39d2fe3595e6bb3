#include "scoring.h"

#include <algorithm>
#include <chrono>
#include <cmath>

Scorer::Scorer(llama_context *ctx, int32_t n_outputs)
    : ctx_(ctx),
      n_outputs_(n_outputs),
      mem_(llama_get_memory(ctx)),
      n_vocab_(llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)))),
      n_batch_(static_cast<int32_t>(llama_n_batch(ctx))),
      n_seq_(static_cast<int32_t>(llama_n_seq_max(ctx))) {}

float Scorer::log_normalizer(const float *logits) const {
  float max = *std::max_element(logits, logits + n_vocab_);
  double sum = 0;
  for (int32_t i = 0; i < n_vocab_; ++i) sum += std::exp(logits[i] - max);
  return max + static_cast<float>(std::log(sum));
}

// Decodes items in chunks of at most n_batch tokens and n_outputs logits rows; after each chunk
// hands the logits of every item that wants them to on_logits(want, logits) before the next
// chunk overwrites them.
template <class OnLogits>
void Scorer::decode(const std::vector<Item> &items, int32_t n_shared, OnLogits on_logits) {
  llama_batch batch = llama_batch_init(n_batch_, 0, n_seq_);
  struct Free {
    llama_batch &b;
    ~Free() { llama_batch_free(b); }
  } free_batch{batch};
  size_t next = 0;
  while (next < items.size()) {
    const size_t start = next;
    int32_t outputs = 0;
    batch.n_tokens = 0;
    while (next < items.size() && batch.n_tokens < n_batch_ && (items[next].want < 0 || outputs < n_outputs_)) {
      const Item &it = items[next++];
      int32_t k = batch.n_tokens++;
      batch.token[k] = it.token;
      batch.pos[k] = it.pos;
      if (it.seq == kShared) {
        batch.n_seq_id[k] = n_shared + 1;
        for (int32_t s = 0; s <= n_shared; ++s) batch.seq_id[k][s] = s;
      } else {
        batch.n_seq_id[k] = 1;
        batch.seq_id[k][0] = it.seq;
      }
      batch.logits[k] = it.want >= 0;
      outputs += it.want >= 0;
    }
    int32_t rc = llama_decode(ctx_, batch);
    if (rc == 2) throw Aborted();
    if (rc != 0) throw std::runtime_error("llama_decode failed with code " + std::to_string(rc));
    for (int32_t k = 0; k < batch.n_tokens; ++k) {
      if (batch.logits[k]) on_logits(items[start + k].want, llama_get_logits_ith(ctx_, k));
    }
  }
}

// Keeps the longest common prefix of sequence 0 from the previous job and drops everything else.
void Scorer::reuse_prefix(const Tokens &prefix) {
  size_t common = 0;
  while (common < cached_.size() && common < prefix.size() && cached_[common] == prefix[common]) ++common;
  for (llama_seq_id s = 1; s < n_seq_; ++s) llama_memory_seq_rm(mem_, s, -1, -1);
  if (!llama_memory_seq_rm(mem_, 0, static_cast<llama_pos>(common), -1)) {
    llama_memory_clear(mem_, true);
    common = 0;
  }
  cached_.resize(common);
}

ScoreResult Scorer::run(const ScoreJob &job) {
  auto t0 = std::chrono::steady_clock::now();
  const size_t n_branch = job.branches.size(), n_opt = job.options.size();
  ScoreResult out;
  out.logprobs.assign(n_branch * n_opt, 0.f);

  reuse_prefix(job.prefix);
  out.cached_tokens = static_cast<int32_t>(cached_.size());
  try {
    // The uncached part of the prefix is decoded in one llama_decode with the first group of
    // branches: its tokens belong to sequence 0 and to every branch sequence of that group.
    std::vector<Item> items;
    for (size_t i = cached_.size(); i < job.prefix.size(); ++i)
      items.push_back({job.prefix[i], static_cast<llama_pos>(i), kShared, -1});

    // Options longer than one token need their own sequences for teacher forcing.
    std::vector<size_t> multi;
    for (size_t o = 0; o < n_opt; ++o)
      if (job.options[o].size() > 1) multi.push_back(o);
    const size_t free_seqs = static_cast<size_t>(n_seq_ - 1);
    const size_t group = multi.empty() ? free_seqs : std::max<size_t>(1, free_seqs / 2);
    const llama_pos p0 = static_cast<llama_pos>(job.prefix.size());

    for (size_t g0 = 0; g0 < n_branch; g0 += group) {
      const size_t g1 = std::min(n_branch, g0 + group);
      // Branches: sequence 1 + (b - g0) continues the shared prefix (copied: the cached part,
      // or for later groups all of it).
      if (g0 > 0) items.clear();
      for (size_t b = g0; b < g1; ++b) {
        llama_seq_id seq = static_cast<llama_seq_id>(1 + b - g0);
        llama_memory_seq_cp(mem_, 0, seq, -1, -1);
        const Tokens &br = job.branches[b];
        for (size_t i = 0; i < br.size(); ++i)
          items.push_back({br[i], p0 + static_cast<llama_pos>(i), seq, i + 1 == br.size() ? static_cast<int32_t>(b) : -1});
      }
      decode(items, static_cast<int32_t>(g1 - g0), [&](int32_t b, const float *logits) {
        float lse = log_normalizer(logits);
        for (size_t o = 0; o < n_opt; ++o) out.logprobs[b * n_opt + o] = logits[job.options[o][0]] - lse;
      });

      // Later tokens of multi-token options, one sequence per (branch, option) pair.
      std::vector<std::pair<size_t, size_t>> pairs;
      for (size_t b = g0; b < g1; ++b)
        for (size_t o : multi) pairs.emplace_back(b, o);
      const size_t chunk = free_seqs - (g1 - g0);
      for (size_t c0 = 0; c0 < pairs.size(); c0 += chunk) {
        const size_t c1 = std::min(pairs.size(), c0 + chunk);
        items.clear();
        std::vector<std::pair<size_t, size_t>> wants;  // want -> (pair, option token index)
        for (size_t k = c0; k < c1; ++k) {
          auto [b, o] = pairs[k];
          llama_seq_id seq = static_cast<llama_seq_id>(1 + (g1 - g0) + (k - c0));
          llama_memory_seq_cp(mem_, static_cast<llama_seq_id>(1 + b - g0), seq, -1, -1);
          const Tokens &opt = job.options[o];
          llama_pos pos = p0 + static_cast<llama_pos>(job.branches[b].size());
          for (size_t i = 0; i + 1 < opt.size(); ++i) {
            items.push_back({opt[i], pos + static_cast<llama_pos>(i), seq, static_cast<int32_t>(wants.size())});
            wants.emplace_back(k, i + 1);
          }
        }
        decode(items, 0, [&](int32_t w, const float *logits) {
          auto [k, i] = wants[w];
          auto [b, o] = pairs[k];
          out.logprobs[b * n_opt + o] += logits[job.options[o][i]] - log_normalizer(logits);
        });
        for (size_t k = c0; k < c1; ++k)
          llama_memory_seq_rm(mem_, static_cast<llama_seq_id>(1 + (g1 - g0) + (k - c0)), -1, -1);
      }
      for (size_t b = g0; b < g1; ++b) llama_memory_seq_rm(mem_, static_cast<llama_seq_id>(1 + b - g0), -1, -1);
      for (size_t b = g0; b < g1; ++b) out.prompt_tokens += static_cast<int32_t>(job.branches[b].size());
    }
  } catch (...) {
    // A failed or aborted decode leaves partial state behind: start the next job from scratch.
    llama_memory_clear(mem_, true);
    cached_.clear();
    throw;
  }
  cached_ = job.prefix;
  out.prompt_tokens += static_cast<int32_t>(job.prefix.size());
  out.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}
