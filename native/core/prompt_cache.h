// PromptCache: the KV of prompts the slots moved away from, kept in host memory for any slot to
// load again (llama-server's --cache-ram does the same). Each slot's context holds one prompt; a
// pipeline that asks several capabilities about one text in turn would otherwise prefill each
// capability's instructions anew, because the other capabilities' prompts evicted them.
// Shared by the slots; every method may be called from any slot thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "jobs.h"

class PromptCache {
 public:
  // Keeps at most `limit_bytes` of KV state; the least recently used prompts go first. With
  // `borrow_texts`, decoders keep every prompt they finish and borrow() lends texts.
  PromptCache(size_t limit_bytes, bool borrow_texts) : limit_(limit_bytes), borrow_texts_(borrow_texts) {}
  bool borrows_texts() const { return borrow_texts_; }

  // Keeps sequence 0 of `ctx`, which holds `tokens`. Nothing is copied when a kept prompt already
  // begins with `tokens`; kept prompts that `tokens` begins with are dropped.
  void save(llama_context *ctx, const Tokens &tokens);

  // When a kept prompt shares more than `have` + kMinLoad leading tokens with `prompt`, loads it
  // into sequence 0 from the first KV cell on, as a fresh prefill lays it out (every other
  // sequence of `ctx` must be empty) and returns how many tokens of `prompt` sequence 0 now holds;
  // past them it may hold the rest of the kept prompt. nullopt when nothing was loaded.
  std::optional<size_t> load(llama_context *ctx, const Tokens &prompt, size_t have);

  // When a kept prompt ends with every token of `prompt` past its first `have` (the same text
  // after other instructions), more than kMinBorrow of them, loads it into the empty sequence `seq`,
  // keeps only those tokens, moved to the positions they have in `prompt`, and hands them to
  // sequence 0, which must hold `prompt`'s first `have`. Returns how many tokens were borrowed
  // (0: none). Their KV was computed after the other prompt's instructions, so it approximates a
  // prefill (docs/performance.md, "A second decision", measures how well).
  size_t borrow(llama_context *ctx, const Tokens &prompt, size_t have, llama_seq_id seq);

  // A load is exact and costs a copy of a few MB (milliseconds), less than prefilling a handful of
  // tokens (llama-bench pp8: 116 ms on 2 Xeon cores). A borrowed text only approximates its
  // prefill, so it must save more: short texts are read again.
  static constexpr size_t kMinLoad = 8;
  static constexpr size_t kMinBorrow = 32;

  struct Stats {
    size_t bytes, prompts;       // kept now
    uint64_t loads, tokens;      // since start: prompts loaded, and the tokens they spared a prefill
    uint64_t borrows, borrowed;  // since start: texts borrowed from another prompt, and their tokens
  };
  Stats stats();

 private:
  struct Entry {
    Tokens tokens;
    std::vector<uint8_t> state;
  };
  std::mutex mu_;
  std::list<std::shared_ptr<const Entry>> entries_;  // most recently used first; guarded by mu_
  size_t limit_, bytes_ = 0;                         // bytes_ guarded by mu_
  const bool borrow_texts_;
  uint64_t loads_ = 0, tokens_ = 0;      // guarded by mu_
  uint64_t borrows_ = 0, borrowed_ = 0;  // guarded by mu_
};
