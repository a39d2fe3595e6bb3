#include "span_kernel.h"

#include <algorithm>
#include <unordered_map>

namespace {

// One branch's walk through the source: which runs of source tokens the answer so far copies.
struct Walk {
  llama_seq_id seq;
  llama_pos pos;
  std::vector<int32_t> active;  // source positions of the span's last token (all occurrences)
  int32_t span_len = 0;
  float span_lp = 0;
  float first_lp = 0;
  llama_token next = -1;  // the token to feed on the next step
  bool first = true;
  bool done = false;
};

class Copier {
 public:
  Copier(Decoder &d, const SpanJob &job, SpanResult &out) : d_(d), job_(job), out_(out) {
    for (int32_t i = 0; i < static_cast<int32_t>(job.source.size()); ++i) starts_[job.source[i]].push_back(i);
    for (size_t k = 0; k < job.start_tokens.size() && k < job.start_positions.size(); ++k) {
      const int32_t at = job.start_positions[k];
      if (at >= 0 && at < static_cast<int32_t>(job.source.size())) starts_[job.start_tokens[k]].push_back(at);
    }
    for (auto &entry : starts_) {
      std::sort(entry.second.begin(), entry.second.end());
      entry.second.erase(std::unique(entry.second.begin(), entry.second.end()), entry.second.end());
    }
  }

  // Chooses the next token of branch b's answer from `logits` (valid only during this call).
  void step(size_t b, Walk &w, const float *logits) {
    const float lse = d_.log_normalizer(logits);
    auto lp = [&](llama_token t) { return logits[t] - lse; };
    if (w.first) {
      if (job_.none >= 0) out_.none_logprob[b] = lp(job_.none);
      const size_t n = job_.first_options.size();
      for (size_t o = 0; o < n; ++o) out_.first_logprobs[b * n + o] = lp(job_.first_options[o]);
      w.first = false;
      if (b + job_.scored_branches >= job_.branches.size()) {  // a scoring branch: no span
        w.done = true;
        return;
      }
    }

    auto &spans = out_.spans[b];
    llama_token best = -1;
    auto consider = [&](llama_token t) {
      if (best < 0 || logits[t] > logits[best]) best = t;
    };
    const bool can_list = job_.separator >= 0 && static_cast<int32_t>(spans.size()) + 1 < job_.max_spans;
    if (w.span_len == 0) {
      for (const auto &entry : starts_) consider(entry.first);  // any source token starts a span
    } else {
      if (w.span_len < job_.max_span_tokens)
        for (int32_t i : w.active)
          if (i + 1 < static_cast<int32_t>(job_.source.size())) consider(job_.source[i + 1]);
      for (llama_token t : job_.stops) consider(t);
      if (can_list) consider(job_.separator);
    }
    if (best < 0) {  // an empty source: nothing to copy
      w.done = true;
      return;
    }

    const bool stop = std::find(job_.stops.begin(), job_.stops.end(), best) != job_.stops.end();
    if (stop || (w.span_len > 0 && best == job_.separator && can_list)) {
      // The closing token belongs to the span's probability; the earliest occurrence wins.
      const int32_t last = *std::min_element(w.active.begin(), w.active.end());
      spans.push_back({last - w.span_len + 1, last + 1, w.span_lp + lp(best), w.first_lp});
      // Past the first span, a list that turns unlikely is over: what follows would be dropped.
      const bool unlikely = spans.size() > 1 && spans.back().logprob < job_.min_list_logprob;
      w.span_len = 0;
      w.span_lp = 0;
      w.active.clear();
      w.done = stop || unlikely;
      w.next = best;
      return;
    }
    w.span_lp += lp(best);
    if (w.span_len == 0) {
      w.first_lp = lp(best);
      w.active = starts_.at(best);
    } else {
      std::vector<int32_t> next;
      for (int32_t i : w.active)
        if (i + 1 < static_cast<int32_t>(job_.source.size()) && job_.source[i + 1] == best) next.push_back(i + 1);
      w.active.swap(next);
    }
    ++w.span_len;
    w.next = best;
  }

 private:
  Decoder &d_;
  const SpanJob &job_;
  SpanResult &out_;
  std::unordered_map<llama_token, std::vector<int32_t>> starts_;  // token -> positions it may start
};

}  // namespace

SpanResult copy_spans(Decoder &d, const SpanJob &job) {
  const size_t n_branch = job.branches.size();
  SpanResult out;
  out.spans.resize(n_branch);
  out.none_logprob.assign(n_branch, -1e30f);
  out.first_logprobs.assign(n_branch * job.first_options.size(), -1e30f);
  Copier copier(d, job, out);
  std::vector<Decoder::Item> pending = d.begin(job.prefix);
  out.cached_tokens = d.cached();
  const size_t group = static_cast<size_t>(d.n_seq() - 1);

  for (size_t g0 = 0; g0 < n_branch; g0 += group) {
    const size_t g1 = std::min(n_branch, g0 + group);
    std::vector<Walk> walks;
    for (size_t b = g0; b < g1; ++b) {
      walks.push_back({static_cast<llama_seq_id>(1 + b - g0),
                       static_cast<llama_pos>(job.prefix.size() + job.branches[b].size()), {}, 0, 0, 0, -1, true, false});
    }
    d.branches(pending, job.prefix, job.branches, g0, g1,
               [&](int32_t b, const float *logits) { copier.step(b, walks[b - g0], logits); });

    // One token per unfinished branch per llama_decode, until every answer has stopped.
    const int32_t max_steps = job.max_spans * (job.max_span_tokens + 1) + 1;
    for (int32_t steps = 0; steps < max_steps; ++steps) {
      std::vector<Decoder::Item> items;
      for (size_t k = 0; k < walks.size(); ++k)
        if (!walks[k].done) items.push_back({walks[k].next, walks[k].pos++, walks[k].seq, static_cast<int32_t>(k)});
      if (items.empty()) break;
      d.decode(items, 0, [&](int32_t k, const float *logits) { copier.step(g0 + k, walks[k], logits); });
    }
    for (size_t b = g0; b < g1; ++b) {
      llama_memory_seq_rm(d.memory(), static_cast<llama_seq_id>(1 + b - g0), -1, -1);
      out.prompt_tokens += static_cast<int32_t>(job.branches[b].size());
    }
  }
  d.finish(job.prefix);
  out.prompt_tokens += static_cast<int32_t>(job.prefix.size());
  return out;
}
