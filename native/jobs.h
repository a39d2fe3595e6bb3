// Plain job and result structs exchanged between the N-API layer (main thread) and the slot
// threads. Nothing here touches N-API: jobs are built on the main thread, then owned by a slot.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

using Tokens = std::vector<llama_token>;

// Score every option after every branch of one shared prefix:
//   logprob[b][o] = log P(options[o] | prefix + branches[b]), summed over the option's tokens.
// The prefix is decoded once (and reused from the slot's cache when a later job shares it);
// each branch continues it on its own sequence, so N statements cost one prefill plus N suffixes.
struct ScoreJob {
  Tokens prefix;                 // may be empty
  std::vector<Tokens> branches;  // >= 1, each non-empty
  std::vector<Tokens> options;   // >= 1, each non-empty
};

struct ScoreResult {
  std::vector<float> logprobs;  // branches.size() x options.size(), row-major
  int32_t prompt_tokens = 0;    // prefix + branch tokens: what the model read for this job
  int32_t cached_tokens = 0;    // prefix tokens reused from the slot's cache (not decoded again)
  double decode_ms = 0;         // wall time inside the slot
};

enum class JobStatus { ok, cancelled, failed };

struct JobOutcome {
  JobStatus status = JobStatus::failed;
  std::string message;  // set when status != ok
  ScoreResult result;   // set when status == ok
};
