// Plain job and result structs exchanged between the N-API layer (main thread) and the slot
// threads. Nothing here touches N-API: jobs are built on the main thread, then owned by a slot.
// Every setting comes from the caller (src/binding.ts documents them); a field with a value here
// is one whose absence switches a feature off, never a tuning default.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "llama.h"

using Tokens = std::vector<llama_token>;

// How many leading tokens a and b share.
inline size_t common_prefix(const Tokens &a, const Tokens &b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Score every option after every branch of one shared prefix:
//   logprob[b][o] = log P(options[o] | prefix + branches[b]), summed over the option's tokens.
// The prefix is decoded once (and reused from the slot's cache when a later job shares it);
// each branch continues it on its own sequence, so N statements cost one prefill plus N suffixes.
struct ScoreJob {
  Tokens prefix;                 // may be empty
  std::vector<Tokens> branches;  // >= 1, each non-empty
  std::vector<Tokens> options;   // >= 1, each non-empty
  // Return hidden states at each branch's last token (ScoreResult::hidden). Off: the decodes are
  // as without the feature.
  bool hidden = false;
  // Which, in this order (read only with `hidden`; empty means {-1}): a layer index 0..n_layer-1
  // for the residual stream after that layer, -1 for the final state after the output norm (the
  // vector the logits are read from). Each entry pauses the graph once per decode.
  std::vector<int32_t> hidden_layers;
};

// Copy spans of `source` after every branch: greedy decoding where the only tokens allowed are
// those that start or continue a run of `source` tokens, a separator between spans (list mode),
// or a stop token. The model's own log-probabilities (over the whole vocabulary) are recorded,
// and the "nothing fits" answer `none` is scored at the first step for comparison.
struct SpanJob {
  Tokens prefix;
  std::vector<Tokens> branches;  // >= 1, each non-empty
  Tokens source;                 // the text, tokenized alone; spans are runs of these tokens
  // Other ways a span may begin: form k is the next start_lengths[k] tokens of start_tokens and
  // stands for source tokens start_positions[k]..start_ends[k] (" Valencia" in the text;
  // "Valencia", which is "Val" + "encia", as the answer's first word; " a" "ml" "od" "ip" "ine" in
  // the text, "aml" "od" "ip" "ine" as the answer's first word). start_ends empty: each form stands
  // for one source token.
  Tokens start_tokens;
  std::vector<int32_t> start_lengths;
  std::vector<int32_t> start_positions;
  std::vector<int32_t> start_ends;
  Tokens stops;                       // end of the answer (end-of-turn, end-of-generation)
  llama_token separator = -1;         // between spans of a list; -1 for a single span
  llama_token inline_separator = -1;  // also between spans of a list, written on one line (","); -1: none
  llama_token none = -1;              // first token of the "nothing fits" answer; -1 for none
  int32_t max_span_tokens = 0;        // >= 1
  int32_t max_spans = 0;              // >= 1
  // Per branch, in place of max_spans and max_span_tokens (empty: those for every branch), so
  // one job asks a text's single values and its lists side by side.
  std::vector<int32_t> branch_max_spans;
  std::vector<int32_t> branch_max_span_tokens;
  // Per branch x source token (row-major): 1 where that branch's spans may begin, so a field of one
  // kind of value (an e-mail address) is copied from such a value; empty: anywhere, every branch.
  std::vector<int32_t> branch_starts;
  float min_list_logprob = -INFINITY;  // a later span of a list less likely than this ends the list
  // Per source token: 1 where a span that would end there takes the next token too, if the model
  // gives that token at least min_join_logprob (a number and its unit, the halves of a plate).
  std::vector<int32_t> join_next;
  float min_join_logprob = 0;
  // Per source token: the model's one token for that token followed by the separator ("%" and "\n"
  // are "%\n"), or -1. Copying it closes the span there.
  Tokens closing_tokens;
  // A first token of a single-value branch's span at most this many nats less likely than the
  // best one is followed too, and its span replaces the greedy one when likelier both whole
  // (closing token included) and per token: a greedy first token can cut a value short ("2018" for
  // "14-01-2018"). 0: greedy only. A list never forks: a rival first token is another item.
  float fork_within = 0;
  Tokens first_options;         // single tokens scored at every branch's first answer step
  int32_t scored_branches = 0;  // the last this many branches only score first_options: no spans

  int32_t spans_of(size_t b) const { return branch_max_spans.empty() ? max_spans : branch_max_spans[b]; }
  int32_t tokens_of(size_t b) const {
    return branch_max_span_tokens.empty() ? max_span_tokens : branch_max_span_tokens[b];
  }
};

struct Span {
  int32_t start, end;   // token indices into source, [start, end)
  float logprob;        // sum of the span's token log-probabilities (and its closing token)
  float first_logprob;  // log-probability of its first token
  float close_logprob;  // log-probability of its closing token: the separator before the next span, or a stop
  float stop_logprob;   // log-probability of the likeliest stop token at that same step
};

struct JobStats {
  int32_t prompt_tokens = 0;  // prefix + branch tokens: what the model read for this job
  int32_t cached_tokens = 0;  // prefix tokens reused from the slot's cache (not decoded again)
  double decode_ms = 0;       // wall time inside the slot
};

struct ScoreResult : JobStats {
  std::vector<float> logprobs;  // branches.size() x options.size(), row-major
  // branches.size() x (hidden_layers.size() x n_embd), row-major: per branch, the rows of the
  // layers asked in their order; empty unless the job asked.
  std::vector<float> hidden;
};

struct SpanResult : JobStats {
  std::vector<std::vector<Span>> spans;  // per branch, in the order decoded
  std::vector<float> none_logprob;       // per branch: log P(none) at the first answer token
  std::vector<float> first_logprobs;     // branches x first_options, row-major
};

// Decode an audio file held in memory and transcribe it with whisper.cpp (see transcribe.h).
struct TranscribeJob {
  std::vector<uint8_t> audio;  // the file's bytes, any supported container and codec
  double max_seconds = 0;      // decoded (or declared) length above this is refused
  std::string language;        // whisper language code, or "auto"
  bool want_pcm = false;       // hand the decoded 16 kHz mono samples back (diarization reads them)
};

struct TranscribedToken {
  std::string text;  // as whisper writes it: a leading space starts a new word
  double t0, t1;     // seconds, whisper's timestamp-token estimate
  double t_dtw;      // seconds, cross-attention alignment (DTW); -1 when not computed
  float p;           // probability
};

struct TranscribedSegment {
  double t0, t1;  // seconds
  float no_speech;
  std::vector<TranscribedToken> tokens;  // text tokens only (no special or timestamp tokens)
};

struct TranscribeResult : JobStats {
  int64_t samples = 0;  // decoded 16 kHz mono samples
  std::string format, codec;
  std::vector<TranscribedSegment> segments;
  std::vector<float> energy;  // RMS of every 10 ms frame: lets word boundaries snap to speech onsets
  std::vector<float> pcm;     // only with want_pcm
};

using Job = std::variant<ScoreJob, SpanJob, TranscribeJob>;
using JobResult = std::variant<ScoreResult, SpanResult, TranscribeResult>;

// How any native work ended. rejected: the input cannot be processed (bad audio); not worth a retry.
enum class Status { ok, cancelled, failed, rejected };

// What a worker thread reports for one piece of work. The N-API layer turns it into a resolved
// promise (ok) or a rejection whose error carries `code` ("cancelled" for cancelled).
template <class Result>
struct Outcome {
  Status status = Status::failed;
  std::string code;     // set when status is failed or rejected: "runner_error", "invalid_audio"...
  std::string message;  // set when status != ok
  Result result;        // set when status == ok
};

using JobOutcome = Outcome<JobResult>;
