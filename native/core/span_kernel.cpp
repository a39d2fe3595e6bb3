#include "span_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace {

// Tokens one copying decode may feed. On a CPU a decode of 16 tokens costs about twice one of a
// single token (llama-bench on 2 EPYC cores: pp1 30 ms, pp4 63 ms, pp16 128 ms), so a batch filled
// with drafted tokens the model accepts takes several steps for the price of two.
constexpr size_t kDraftBatch = 16;

float log_add(float a, float b) {
  const float m = std::max(a, b);
  return m == -INFINITY ? m : m + std::log(std::exp(a - m) + std::exp(b - m));
}

// log P(a separator | a separator or the end) where a span closed: whether a list goes on.
float more_logprob(const Span &s) { return s.close_logprob - log_add(s.close_logprob, s.stop_logprob); }

// Whether span a (a rival reading of one value) beats b: likelier as a whole, its closing token
// included, and per token, so a short copy does not win for being short (an address cut to its
// last line) nor a confident copy from elsewhere for its later tokens ("620 USD" as a name).
bool likelier(const Span &a, const Span &b) {
  auto per_token = [](const Span &s) { return s.logprob / static_cast<float>(s.end - s.start + 1); };
  return a.logprob > b.logprob && per_token(a) > per_token(b);
}

// A place a copied answer can be at: a source token, or a token of another form of some.
struct Place {
  llama_token token;
  int32_t next;    // the place after this one, -1 at the end of the source
  int32_t first;   // the source token a span that begins at this place begins at
  int32_t origin;  // the last source token this place stands for
  bool whole;      // a span may end here (not inside a form)
};

// One branch's walk through the source: where the answer so far may be copied from.
struct Walk {
  size_t branch;
  llama_seq_id seq;
  llama_pos pos;
  std::vector<Span> spans;                          // closed so far
  std::vector<std::pair<int32_t, int32_t>> active;  // (source token the span starts at, its last place)
  int32_t span_len = 0;
  float span_lp = 0;
  float first_lp = 0;
  llama_token next = -1;  // the token to feed on the next step
  size_t drafts = 1;      // source tokens to draft after next: doubled while all are taken (Copier::draft)
  bool first = true;
  bool done = false;
};

class Copier {
 public:
  // Places 0..n-1 are the source tokens; each other start form follows as a chain of places whose
  // last one continues at the source token after the last one the form stands for.
  Copier(Decoder &d, const SpanJob &job, SpanResult &out) : d_(d), job_(job), out_(out) {
    const int32_t n = static_cast<int32_t>(job.source.size());
    auto after = [n](int32_t i) { return i + 1 < n ? i + 1 : -1; };
    for (int32_t i = 0; i < n; ++i) {
      places_.push_back({job.source[i], after(i), i, i, true});
      starts_[job.source[i]].push_back(i);
    }
    size_t at = 0;
    for (size_t k = 0; k < job.start_lengths.size(); ++k) {
      const int32_t first = static_cast<int32_t>(places_.size()), len = job.start_lengths[k],
                    begin = job.start_positions[k], end = job.start_ends.empty() ? begin : job.start_ends[k];
      for (int32_t j = 0; j < len; ++j) {
        const bool last = j + 1 == len;
        places_.push_back(
            {job.start_tokens[at + j], last ? after(end) : first + j + 1, begin, last ? end : begin, last});
      }
      starts_[job.start_tokens[at]].push_back(first);
      at += len;
    }
  }

  // Chooses the next token of walk w's answer from `logits` (valid only during this call). A rival
  // first token close behind the chosen one is queued as a new walk in `forks`.
  void step(Walk &w, const float *logits, std::vector<Walk> &forks) {
    const size_t b = w.branch;
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

    auto &spans = w.spans;
    llama_token best = -1, rival = -1;
    auto consider = [&](llama_token t) {
      if (best < 0 || logits[t] > logits[best]) {
        rival = best;
        best = t;
      } else if (t != best && (rival < 0 || logits[t] > logits[rival])) {
        rival = t;
      }
    };
    const int32_t max_tokens = job_.tokens_of(b);
    const bool can_list = job_.separator >= 0 && static_cast<int32_t>(spans.size()) + 1 < job_.spans_of(b);
    bool whole = false;  // the answer so far is a whole span: it may end here
    bool join = true;    // every place it may end at asks to go on (see SpanJob::join_next)
    float credit = 0;    // log-probability of ending here, added to a span that went on instead
    if (w.span_len == 0) {
      for (const auto &[token, places] : starts_)  // any source token starts a span, where the branch allows
        if (std::any_of(places.begin(), places.end(), [&](int32_t p) { return may_begin(b, p); })) consider(token);
    } else {
      for (auto [start, p] : w.active) {
        const Place &place = places_[p];
        whole = whole || place.whole;
        if (place.whole) join = join && !job_.join_next.empty() && job_.join_next[place.origin];
        // A form is finished whatever the length limit: its span ends on a whole token.
        if (place.next >= 0 && (w.span_len < max_tokens || !place.whole)) consider(places_[place.next].token);
      }
      // Ending here is one choice however it is written, the separator (more spans follow) or a
      // stop, and it is weighed whole against going on: split in two, it lost to a next word
      // ("Maersk container") that each part alone was less likely than.
      float end_lp = -INFINITY;
      llama_token end = -1;
      if (whole) {
        auto end_with = [&](llama_token t) {
          end_lp = log_add(end_lp, lp(t));
          if (end < 0 || logits[t] > logits[end]) end = t;
        };
        for (llama_token t : job_.stops) end_with(t);
        if (can_list) {
          end_with(job_.separator);
          if (job_.inline_separator >= 0) end_with(job_.inline_separator);
        }
      }
      if (whole && join && best >= 0 && lp(best) >= job_.min_join_logprob) {
        // Ending here and going on are one answer: the span keeps the probability of both.
        credit = log_add(lp(best), end_lp) - lp(best);
        end = -1;
      }
      if (can_list && w.span_len < max_tokens)
        for (auto [start, p] : w.active)
          if (const int32_t q = places_[p].next; closing(q) >= 0) consider(closing(q));
      if (end >= 0 && (best < 0 || end_lp > lp(best))) best = end;
    }
    if (best < 0) {  // an empty source: nothing to copy
      w.done = true;
      return;
    }

    // The model wrote the next source token and the separator as one token ("%\n"): the span takes
    // that source token and closes there. A text token that ends its line (")\n") is its own
    // closing token: in a list, copying it ends the item there.
    bool closed_by_merge = false;
    if (w.span_len > 0 && !separates(best)) {
      std::vector<std::pair<int32_t, int32_t>> merged;
      bool copies = false;
      for (auto [start, p] : w.active) {
        const int32_t q = places_[p].next;
        if (can_list && closing(q) == best)
          merged.emplace_back(start, q);
        else
          copies = copies || (q >= 0 && places_[q].token == best);
      }
      if (!copies && !merged.empty()) {
        w.active.swap(merged);
        ++w.span_len;
        closed_by_merge = true;
      }
    }
    const bool stop = std::find(job_.stops.begin(), job_.stops.end(), best) != job_.stops.end();
    if (closed_by_merge || (whole && (stop || (separates(best) && can_list)))) {
      // The closing token belongs to the span's probability; the earliest occurrence wins.
      std::pair<int32_t, int32_t> chosen{INT32_MAX, -1};
      for (auto [start, p] : w.active)
        if (places_[p].whole && start < chosen.first) chosen = {start, p};
      float stop_lp = -INFINITY;
      for (llama_token t : job_.stops) stop_lp = std::max(stop_lp, lp(t));
      spans.push_back(
          {chosen.first, places_[chosen.second].origin + 1, w.span_lp + lp(best), w.first_lp, lp(best), stop_lp});
      // Past the first span, a list that turns unlikely is over: what follows would be dropped. A
      // span is as likely as "another one" against "the end" where the span before it closed, times
      // its own tokens; its closing token decides what comes after it, not whether it belongs.
      const size_t n = spans.size();
      const bool unlikely = n > 1 && more_logprob(spans[n - 2]) + w.span_lp < job_.min_list_logprob;
      w.span_len = 0;
      w.span_lp = 0;
      w.active.clear();
      w.done = stop || unlikely;
      w.next = best;
      return;
    }
    // Only where a branch's first span begins, which happens once per walk (a fork has begun it).
    if (job_.fork_within > 0 && job_.spans_of(b) == 1 && w.span_len == 0 && spans.empty() && rival >= 0 &&
        lp(rival) >= lp(best) - job_.fork_within) {
      forks.push_back(w);
      begin_span(forks.back(), rival, lp(rival));
    }
    if (w.span_len == 0) {
      begin_span(w, best, lp(best));
      return;
    }
    w.span_lp += lp(best) + credit;
    std::vector<std::pair<int32_t, int32_t>> next;
    for (auto [start, p] : w.active) {
      const int32_t q = places_[p].next;
      if (q >= 0 && places_[q].token == best) next.emplace_back(start, q);
    }
    w.active.swap(next);
    ++w.span_len;
    w.next = best;
  }

  // The source tokens walk w would copy next if it goes on copying: the tokens every place its
  // span may be at continues with alike, at most n and not past the span's length limit. Fed
  // after w.next in the same decode, each is checked against what the model then chooses.
  std::vector<llama_token> draft(const Walk &w, size_t n) const {
    std::vector<llama_token> out;
    if (w.done || w.span_len == 0) return out;
    std::vector<int32_t> at;
    for (auto [start, p] : w.active) at.push_back(p);
    const size_t room = static_cast<size_t>(std::max(0, job_.tokens_of(w.branch) - w.span_len));
    while (out.size() < std::min(n, room)) {
      llama_token t = -1;
      for (int32_t &p : at) {
        const int32_t q = places_[p].next;
        if (q < 0 || (t >= 0 && places_[q].token != t)) return out;
        t = places_[q].token;
        p = q;
      }
      out.push_back(t);
    }
    return out;
  }

 private:
  // Whether the model wrote t between two spans of a list.
  bool separates(llama_token t) const { return t == job_.separator || (t >= 0 && t == job_.inline_separator); }

  // Whether branch b's spans may begin at place p (SpanJob::branch_starts).
  bool may_begin(size_t b, int32_t p) const {
    return job_.branch_starts.empty() || job_.branch_starts[b * job_.source.size() + places_[p].first] != 0;
  }

  // Walk w's next span starts with token t, of log-probability lp.
  void begin_span(Walk &w, llama_token t, float lp) {
    w.span_lp = w.first_lp = lp;
    w.active.clear();
    for (int32_t p : starts_.at(t))
      if (may_begin(w.branch, p)) w.active.emplace_back(places_[p].first, p);
    w.span_len = 1;
    w.next = t;
  }

  // The token that writes source place q and then the separator, or -1 (none, or q is not a source token).
  llama_token closing(int32_t q) const {
    return q >= 0 && static_cast<size_t>(q) < job_.closing_tokens.size() ? job_.closing_tokens[q] : -1;
  }

  Decoder &d_;
  const SpanJob &job_;
  SpanResult &out_;
  std::vector<Place> places_;
  std::unordered_map<llama_token, std::vector<int32_t>> starts_;  // token -> places a span may begin at
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
  // Branches run side by side as long as the slot's context holds the longest answer each could
  // copy; the rest wait for the next group. The caller checked that one branch alone fits.
  const size_t max_group = static_cast<size_t>(d.n_seq() - 1);
  // The most tokens branch b may write: its spans, each closed by one token.
  auto answer_of = [&job](size_t b) { return static_cast<size_t>(job.spans_of(b)) * (job.tokens_of(b) + 1); };
  size_t longest_answer = 0;
  for (size_t b = 0; b < n_branch; ++b) longest_answer = std::max(longest_answer, answer_of(b));
  const size_t room = static_cast<size_t>(d.n_ctx()) - std::min<size_t>(job.prefix.size(), d.n_ctx());

  for (size_t g0 = 0, g1 = 0; g0 < n_branch; g0 = g1) {
    size_t used = 0;
    for (; g1 < n_branch && g1 - g0 < max_group; ++g1) {
      const size_t need = job.branches[g1].size() + answer_of(g1);
      if (used + need > room && g1 > g0) break;
      used += need;
    }
    std::vector<Walk> walks;
    for (size_t b = g0; b < g1; ++b)
      walks.push_back({b, static_cast<llama_seq_id>(1 + b - g0),
                       static_cast<llama_pos>(job.prefix.size() + job.branches[b].size())});
    // A rival first token gets a sequence of its own, a copy of its branch's, while sequences and
    // context room last; otherwise the greedy choice stands.
    std::vector<Walk> forks;
    auto adopt_forks = [&] {
      for (Walk &f : forks) {
        if (walks.size() >= max_group || used + answer_of(f.branch) > room) break;
        const auto seq = static_cast<llama_seq_id>(walks.size() + 1);
        llama_memory_seq_cp(d.memory(), f.seq, seq, -1, -1);
        f.seq = seq;
        used += answer_of(f.branch);
        walks.push_back(std::move(f));
      }
      forks.clear();
    };
    d.branches(pending, job.prefix, job.branches, g0, g1,
               [&](int32_t b, const float *logits) { copier.step(walks[b - g0], logits, forks); });
    adopt_forks();

    // Each llama_decode feeds every unfinished walk its next token and then, within kDraftBatch
    // tokens in all, the source tokens it would copy after that (Copier::draft). A drafted token
    // the model then chooses is kept and its logits read; the first one it does not choose, and
    // what follows, is taken back out of the cache. The answers are the same as one token per step.
    const int32_t max_steps = static_cast<int32_t>(longest_answer) + 1;
    for (int32_t steps = 0; steps < max_steps; ++steps) {
      size_t live = 0;
      for (const Walk &w : walks) live += !w.done;
      if (live == 0) break;
      const size_t share = kDraftBatch / live > 1 ? kDraftBatch / live - 1 : 0;
      std::vector<Decoder::Item> items;
      std::vector<std::pair<size_t, size_t>> rows;  // item -> (walk, how far into its feed)
      std::vector<std::vector<llama_token>> feeds(walks.size());
      std::vector<llama_pos> fed_at(walks.size());
      for (size_t k = 0; k < walks.size(); ++k) {
        if (walks[k].done) continue;
        feeds[k] = copier.draft(walks[k], std::min(share, walks[k].drafts));
        feeds[k].insert(feeds[k].begin(), walks[k].next);
        fed_at[k] = walks[k].pos;
        for (size_t j = 0; j < feeds[k].size(); ++j) {
          items.push_back(
              {feeds[k][j], fed_at[k] + static_cast<llama_pos>(j), walks[k].seq, static_cast<int32_t>(rows.size())});
          rows.emplace_back(k, j);
        }
      }
      std::vector<size_t> stepped(walks.size(), 0);
      d.decode(items, 0, [&](int32_t row, const float *logits) {
        const auto [k, j] = rows[static_cast<size_t>(row)];
        Walk &w = walks[k];
        // Row j holds the model's view after feeds[k][j]: valid while every earlier row was
        // read and chose the token fed after it.
        if (stepped[k] != j || (j > 0 && (w.done || w.next != feeds[k][j]))) return;
        copier.step(w, logits, forks);
        ++stepped[k];
      });
      for (size_t k = 0; k < walks.size(); ++k) {
        if (feeds[k].empty()) continue;
        Walk &w = walks[k];
        w.pos = fed_at[k] + static_cast<llama_pos>(stepped[k]);
        const bool taken = stepped[k] == feeds[k].size();
        if (!taken) llama_memory_seq_rm(d.memory(), w.seq, w.pos, -1);
        // A copy that took every drafted token is a long value: draft more. One that did not
        // (a short name ends) drafts one again: tokens taken back cost a decode its time.
        w.drafts = taken && feeds[k].size() > 1 ? std::min<size_t>(2 * w.drafts, kDraftBatch) : 1;
      }
      adopt_forks();
    }
    // A branch answers with the walk whose first span is likelier (see likelier).
    for (Walk &w : walks) {
      llama_memory_seq_rm(d.memory(), w.seq, -1, -1);
      auto &chosen = out.spans[w.branch];
      if (chosen.empty() || (!w.spans.empty() && likelier(w.spans[0], chosen[0]))) chosen = std::move(w.spans);
    }
    for (size_t b = g0; b < g1; ++b) out.prompt_tokens += static_cast<int32_t>(job.branches[b].size());
  }
  d.finish(job.prefix);
  out.prompt_tokens += static_cast<int32_t>(job.prefix.size());
  return out;
}
