#include "scoring.h"

#include <algorithm>

ScoreResult score_options(Decoder &d, const ScoreJob &job) {
  const size_t n_branch = job.branches.size(), n_opt = job.options.size();
  ScoreResult out;
  out.logprobs.assign(n_branch * n_opt, 0.f);
  std::vector<int32_t> layers;  // empty: no hidden states
  if (job.hidden) layers = job.hidden_layers.empty() ? std::vector<int32_t>{-1} : job.hidden_layers;
  const size_t width = layers.size() * static_cast<size_t>(d.n_embd());
  out.hidden.resize(n_branch * width);
  std::vector<Decoder::Item> pending = d.begin(job.prefix);
  out.cached_tokens = d.cached();

  // Options longer than one token need their own sequences for teacher forcing.
  std::vector<size_t> multi;
  for (size_t o = 0; o < n_opt; ++o)
    if (job.options[o].size() > 1) multi.push_back(o);
  const size_t free_seqs = static_cast<size_t>(d.n_seq() - 1);
  const size_t group = multi.empty() ? free_seqs : std::max<size_t>(1, free_seqs / 2);
  const llama_pos p0 = static_cast<llama_pos>(job.prefix.size());
  llama_memory_t mem = d.memory();

  for (size_t g0 = 0; g0 < n_branch; g0 += group) {
    const size_t g1 = std::min(n_branch, g0 + group);
    d.branches(
        pending, job.prefix, job.branches, g0, g1,
        [&](int32_t b, const float *logits, const float *hidden) {
          float lse = d.log_normalizer(logits);
          for (size_t o = 0; o < n_opt; ++o) out.logprobs[b * n_opt + o] = logits[job.options[o][0]] - lse;
          if (hidden != nullptr) std::copy(hidden, hidden + width, out.hidden.begin() + b * width);
        },
        layers);

    // Later tokens of multi-token options, one sequence per (branch, option) pair.
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t b = g0; b < g1; ++b)
      for (size_t o : multi) pairs.emplace_back(b, o);
    const size_t chunk = free_seqs - (g1 - g0);
    for (size_t c0 = 0; c0 < pairs.size(); c0 += chunk) {
      const size_t c1 = std::min(pairs.size(), c0 + chunk);
      std::vector<Decoder::Item> items;
      std::vector<std::pair<size_t, size_t>> wants;  // want -> (pair, option token index)
      for (size_t k = c0; k < c1; ++k) {
        auto [b, o] = pairs[k];
        llama_seq_id seq = static_cast<llama_seq_id>(1 + (g1 - g0) + (k - c0));
        llama_memory_seq_cp(mem, static_cast<llama_seq_id>(1 + b - g0), seq, -1, -1);
        const Tokens &opt = job.options[o];
        llama_pos pos = p0 + static_cast<llama_pos>(job.branches[b].size());
        for (size_t i = 0; i + 1 < opt.size(); ++i) {
          items.push_back({opt[i], pos + static_cast<llama_pos>(i), seq, static_cast<int32_t>(wants.size())});
          wants.emplace_back(k, i + 1);
        }
      }
      d.decode(items, 0, [&](int32_t w, const float *logits) {
        auto [k, i] = wants[w];
        auto [b, o] = pairs[k];
        out.logprobs[b * n_opt + o] += logits[job.options[o][i]] - d.log_normalizer(logits);
      });
      for (size_t k = c0; k < c1; ++k)
        llama_memory_seq_rm(mem, static_cast<llama_seq_id>(1 + (g1 - g0) + (k - c0)), -1, -1);
    }
    for (size_t b = g0; b < g1; ++b) {
      llama_memory_seq_rm(mem, static_cast<llama_seq_id>(1 + b - g0), -1, -1);
      out.prompt_tokens += static_cast<int32_t>(job.branches[b].size());
    }
  }
  d.finish(job.prefix);
  out.prompt_tokens += static_cast<int32_t>(job.prefix.size());
  return out;
}
