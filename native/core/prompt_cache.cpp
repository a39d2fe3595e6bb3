#include "prompt_cache.h"

#include <algorithm>

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
  size_t best_n = have + kMinLoad;
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
  llama_memory_clear(llama_get_memory(ctx), false);  // every sequence is empty: laid out from the first cell
  if (llama_state_seq_set_data(ctx, best->state.data(), best->state.size(), 0) != best->state.size()) {
    llama_memory_seq_rm(llama_get_memory(ctx), 0, -1, -1);  // a partial load is no prefix
    return 0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++loads_;
  tokens_ += best_n - have;
  return best_n;
}

// How many trailing tokens a and b share, at most `limit`.
static size_t common_suffix(const Tokens &a, const Tokens &b, size_t limit) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && n < limit && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

size_t PromptCache::borrow(llama_context *ctx, const Tokens &prompt, size_t have, llama_seq_id seq) {
  const size_t need = prompt.size() - std::min(have, prompt.size());
  llama_memory_t mem = llama_get_memory(ctx);
  // A model whose positions cannot be moved (M-RoPE, recurrent memory) reads every text itself.
  if (!borrow_texts_ || need <= kMinBorrow || !llama_memory_can_shift(mem)) return 0;
  std::shared_ptr<const Entry> best;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &e : entries_)
      if (e->tokens.size() > need && common_suffix(e->tokens, prompt, need) == need) {
        best = e;
        break;
      }
    if (!best) return 0;
  }
  if (llama_state_seq_set_data(ctx, best->state.data(), best->state.size(), seq) != best->state.size()) {
    llama_memory_seq_rm(mem, seq, -1, -1);
    return 0;
  }
  const llama_pos from = static_cast<llama_pos>(best->tokens.size() - need);
  const llama_pos to = static_cast<llama_pos>(have);
  llama_memory_seq_rm(mem, seq, 0, from);
  llama_memory_seq_add(mem, seq, from, -1, to - from);
  llama_memory_seq_cp(mem, seq, 0, -1, -1);
  llama_memory_seq_rm(mem, seq, -1, -1);
  std::lock_guard<std::mutex> lock(mu_);
  ++borrows_;
  borrowed_ += need;
  return need;
}

PromptCache::Stats PromptCache::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return {bytes_, entries_.size(), loads_, tokens_, borrows_, borrowed_};
}
