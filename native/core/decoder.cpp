#include "decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// Asked about every node of every graph computed (ask = true); answers yes only for the output
// norm ("result_norm", n_embd x this ubatch's outputs: llama.cpp's graphs drop the other rows
// before the last layer's feed-forward) while capturing. Then it is called again (ask = false)
// once that node is computed, before the rest of the graph. Our ubatches are whole batches
// (n_ubatch = n_batch, unified KV: split_simple), so the rows come in batch order.
bool HiddenCapture::eval(ggml_tensor *t, bool ask, void *self) {
  auto *c = static_cast<HiddenCapture *>(self);
  if (!c->on || std::strcmp(t->name, "result_norm") != 0 || t->type != GGML_TYPE_F32 || !ggml_is_contiguous(t))
    return false;
  if (ask) return true;
  const size_t n = c->rows.size(), bytes = ggml_nbytes(t);
  c->rows.resize(n + static_cast<size_t>(ggml_nelements(t)));
  if (bytes > 0) ggml_backend_tensor_get(t, c->rows.data() + n, 0, bytes);
  return true;  // false would stop the graph here
}

Decoder::Decoder(llama_context *ctx, int32_t n_outputs, PromptCache *prompts, HiddenCapture *hidden)
    : ctx_(ctx),
      prompts_(prompts),
      hidden_(hidden),
      mem_(llama_get_memory(ctx)),
      n_vocab_(llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)))),
      n_batch_(static_cast<int32_t>(llama_n_batch(ctx))),
      n_seq_(static_cast<int32_t>(llama_n_seq_max(ctx))),
      n_ctx_(static_cast<int32_t>(llama_n_ctx(ctx))),
      n_outputs_(n_outputs),
      n_embd_(llama_model_n_embd(llama_get_model(ctx))) {}

std::vector<Decoder::Item> Decoder::begin(const Tokens &prefix) {
  size_t common = common_prefix(cached_, prefix);
  for (llama_seq_id s = 1; s < n_seq_; ++s) llama_memory_seq_rm(mem_, s, -1, -1);
  if (prompts_ != nullptr) {
    // Kept when the new prompt is another kind (other instructions), not the same kind on a new
    // text: a loop over texts would otherwise copy out every prompt it moves past.
    if (cached_.size() > common + PromptCache::kMinLoad && common < cached_.size() / 2) prompts_->save(ctx_, cached_);
    if (auto held = prompts_->load(ctx_, prefix, common)) {
      common = *held;
      cached_.assign(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(common));
    }
  }
  if (!llama_memory_seq_rm(mem_, 0, static_cast<llama_pos>(common), -1)) {
    llama_memory_clear(mem_, true);
    common = 0;
  }
  // Nothing kept: the prefix goes to the first KV cells, as on a new context. A token's cells are
  // where a fresh run puts them (sequence 0's kept prefix first, the rest after it in batch order).
  if (common == 0) llama_memory_clear(mem_, false);
  cached_.resize(common);
  borrowed_ = 0;
  if (prompts_ != nullptr) borrowed_ = prompts_->borrow(ctx_, prefix, common, 1);
  std::vector<Item> items;
  for (size_t i = common + borrowed_; i < prefix.size(); ++i)
    items.push_back({prefix[i], static_cast<llama_pos>(i), kShared, -1});
  return items;
}

void Decoder::reset() {
  llama_memory_clear(mem_, true);
  cached_.clear();
}

float Decoder::log_normalizer(const float *logits) const {
  float max = *std::max_element(logits, logits + n_vocab_);
  double sum = 0;
  for (int32_t i = 0; i < n_vocab_; ++i) sum += std::exp(logits[i] - max);
  return max + static_cast<float>(std::log(sum));
}

// Fills the batch from items[next..] (at most n_batch tokens and n_outputs logits rows), decodes
// it and advances next. With `hidden`, hidden_->rows then holds one row per output.
void Decoder::decode_chunk(const std::vector<Item> &items, size_t &next, int32_t n_shared, llama_batch &batch,
                           bool hidden) {
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
  hidden_->rows.clear();
  hidden_->on = hidden;
  int32_t rc = llama_decode(ctx_, batch);
  hidden_->on = false;
  if (rc == 2) throw Cancelled();
  if (rc != 0) throw std::runtime_error("llama_decode failed with code " + std::to_string(rc));
  if (hidden && hidden_->rows.size() != static_cast<size_t>(outputs) * static_cast<size_t>(n_embd_))
    throw std::runtime_error("the model's graph has no result_norm tensor to read hidden states from");
}
