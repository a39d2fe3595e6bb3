#include "prompt_cache.h"

void PromptCache::save(llama_context *ctx, const Tokens &tokens) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      const size_t n = common_prefix((*it)->tokens, tokens);
      if (n == tokens.size()) {  // already kept, maybe with more after it
        entries_.splice(entries_.begin(), entries_, it);
        return;
      }
      if (n == (*it)->tokens.size()) {  // a shorter prompt the new one replaces
        bytes_ -= (*it)->state.size();
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Copied outside the lock: the other slots may load meanwhile.
  const size_t size = llama_state_seq_get_size(ctx, 0);
  if (size > limit_ / 4) return;  // one long text would push out everything else
  auto entry = std::make_shared<Entry>();
  entry->state.resize(size);
  if (llama_state_seq_get_data(ctx, entry->state.data(), entry->state.size(), 0) != entry->state.size()) return;
  entry->tokens = tokens;
  std::lock_guard<std::mutex> lock(mu_);
  bytes_ += entry->state.size();
  entries_.push_front(std::move(entry));
  while (bytes_ > limit_) {
    bytes_ -= entries_.back()->state.size();
    entries_.pop_back();
  }
}

std::optional<size_t> PromptCache::load(llama_context *ctx, const Tokens &prompt, size_t have) {
  std::shared_ptr<const Entry> best;
  size_t best_n = have + kMinGain;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto best_it = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const size_t n = common_prefix((*it)->tokens, prompt);
      if (n > best_n) best_n = n, best_it = it;
    }
    if (best_it == entries_.end()) return std::nullopt;
    best = *best_it;
    entries_.splice(entries_.begin(), entries_, best_it);
  }
  llama_memory_seq_rm(llama_get_memory(ctx), 0, -1, -1);
  if (llama_state_seq_set_data(ctx, best->state.data(), best->state.size(), 0) != best->state.size()) {
    llama_memory_seq_rm(llama_get_memory(ctx), 0, -1, -1);  // a partial load is no prefix
    return 0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++loads_;
  tokens_ += best_n - have;
  return best_n;
}

PromptCache::Stats PromptCache::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return {bytes_, entries_.size(), loads_, tokens_};
}
