#include "decoder.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
constexpr int32_t kNotAsked = -2;

// The layer a graph node stands for: -1 for "result_norm", il for "l_out-<il>" (llama.cpp names a
// node given a layer "<name>-<il>"), kNotAsked for any other.
int32_t layer_of(const char *name) {
  if (std::strcmp(name, "result_norm") == 0) return -1;
  if (std::strncmp(name, "l_out-", 6) != 0 || name[6] < '0' || name[6] > '9') return kNotAsked;
  char *end = nullptr;
  const long il = std::strtol(name + 6, &end, 10);
  return *end == '\0' && il <= INT32_MAX ? static_cast<int32_t>(il) : kNotAsked;
}

std::string layer_name(int32_t il) { return il < 0 ? "result_norm" : "l_out-" + std::to_string(il); }
}  // namespace

void HiddenCapture::start(const std::vector<int32_t> &layers, const llama_batch &batch, int32_t n_outputs,
                          int32_t n_embd) {
  layers_ = &layers;
  is_output_ = batch.logits;
  n_tokens_ = batch.n_tokens;
  n_outputs_ = n_outputs;
  n_embd_ = n_embd;
  rows.resize(static_cast<size_t>(n_outputs) * layers.size() * static_cast<size_t>(n_embd));
  taken_.assign(layers.size(), 0);
  error_.clear();
  on = true;
}

void HiddenCapture::check() {
  on = false;
  if (!error_.empty()) throw std::runtime_error(error_);
  for (size_t k = 0; k < taken_.size(); ++k) {
    const std::string name = layer_name((*layers_)[k]);
    if (taken_[k] == 0)
      throw std::runtime_error("the model's graph has no " + name + " tensor to read hidden states from");
    if (taken_[k] > 1)
      throw std::runtime_error("the model's graph computed its " + name + " tensor " + std::to_string(taken_[k]) +
                               " times in one decode (more than one micro-batch)");
  }
}

// Asked about every node of every graph computed (ask = true); answers yes, while capturing, only
// for the nodes of the layers asked. The scheduler then computes the graph up to that node and
// calls again (ask = false) before computing any later node: the node's buffer, which a later node
// may reuse once the node's readers are done, still holds its value.
bool HiddenCapture::eval(ggml_tensor *t, bool ask, void *self) {
  auto *c = static_cast<HiddenCapture *>(self);
  if (!c->on) return false;
  const int32_t il = layer_of(t->name);
  if (il == kNotAsked || std::find(c->layers_->begin(), c->layers_->end(), il) == c->layers_->end()) return false;
  if (!ask) c->take(t, il);
  return true;  // false (ask = false) would stop the graph here
}

// A layer's node holds n_embd floats per row, one row per token of the ubatch (the layers before
// the last one) or per output (the last layer and the output norm: llama.cpp's graphs drop the
// other rows within the last layer, before its feed-forward). The shape tells which, whatever the
// architecture does; with every token an output both readings agree. Our ubatches are whole
// batches (n_ubatch = n_batch, unified KV: split_simple), so the rows come in batch order; a
// second ubatch would show as a node read twice (check()).
void HiddenCapture::take(const ggml_tensor *t, int32_t il) {
  const int64_t n = t->ne[1];
  if (t->type != GGML_TYPE_F32 || t->ne[0] != n_embd_ || t->nb[0] != sizeof(float) || t->ne[2] != 1 || t->ne[3] != 1 ||
      (n != n_tokens_ && n != n_outputs_)) {
    if (error_.empty())
      error_ = "the model's graph " + layer_name(il) + " tensor is not n_embd floats per token or output (" +
               std::to_string(t->ne[0]) + " x " + std::to_string(n) + ")";
    return;
  }
  const bool per_token = n == n_tokens_;
  const size_t row = static_cast<size_t>(n_embd_), width = layers_->size() * row;
  for (size_t k = 0; k < layers_->size(); ++k) {
    if ((*layers_)[k] != il || taken_[k]++ > 0) continue;
    size_t o = 0;
    for (int64_t r = 0; r < n && o < static_cast<size_t>(n_outputs_); ++r) {
      if (per_token && !is_output_[r]) continue;  // a row the graph computes but nobody reads
      // Row by row: a view's rows may lie apart (nb[1]).
      ggml_backend_tensor_get(t, rows.data() + o * width + k * row, static_cast<size_t>(r) * t->nb[1],
                              row * sizeof(float));
      ++o;
    }
  }
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
// it and advances next. With `layers`, hidden_->rows then holds their rows for every output.
void Decoder::decode_chunk(const std::vector<Item> &items, size_t &next, int32_t n_shared, llama_batch &batch,
                           const std::vector<int32_t> &layers) {
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
  const bool capture = !layers.empty() && outputs > 0;  // a prefix-only chunk has no rows to read
  if (capture) hidden_->start(layers, batch, outputs, n_embd_);
  int32_t rc = llama_decode(ctx_, batch);
  hidden_->on = false;
  if (rc == 2) throw Cancelled();
  if (rc != 0) throw std::runtime_error("llama_decode failed with code " + std::to_string(rc));
  if (capture) hidden_->check();
}
