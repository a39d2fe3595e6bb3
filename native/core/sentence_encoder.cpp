#include "sentence_encoder.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

SentenceEncoder::SentenceEncoder(const std::string &path, const SentenceEncoderConfig &cfg)
    : batch_(cfg.batch_tokens), sequences_(cfg.sequences) {
  model_ = llama_model_load_from_file(path.c_str(), llama_model_default_params());
  if (model_ == nullptr) throw std::runtime_error("could not load encoder model " + path);
  dim_ = llama_model_n_embd(model_);
  window_ = std::min(llama_model_n_ctx_train(model_), batch_);
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(batch_);
  cp.n_batch = static_cast<uint32_t>(batch_);
  cp.n_ubatch = static_cast<uint32_t>(batch_);  // a non-causal model sees a whole text in one micro-batch
  cp.n_seq_max = static_cast<uint32_t>(sequences_);
  cp.n_threads = cp.n_threads_batch = cfg.threads;
  cp.embeddings = true;
  cp.pooling_type = LLAMA_POOLING_TYPE_MEAN;
  ctx_ = llama_init_from_model(model_, cp);
  if (ctx_ == nullptr) {
    llama_model_free(model_);
    throw std::runtime_error("could not create the encoder context");
  }
}

SentenceEncoder::~SentenceEncoder() {
  llama_free(ctx_);
  llama_model_free(model_);
}

std::vector<float> SentenceEncoder::embed(const std::vector<std::string> &texts) {
  const llama_vocab *vocab = llama_model_get_vocab(model_);
  std::vector<std::vector<llama_token>> tokens;
  for (const std::string &text : texts) {
    std::vector<llama_token> t(text.size() + 3);
    int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), t.data(),
                           static_cast<int32_t>(t.size()), true, false);
    if (n < 0) throw std::runtime_error("encoder tokenizer failed");
    t.resize(static_cast<size_t>(std::min(n, window_)));
    tokens.push_back(std::move(t));
  }
  std::vector<float> vectors(tokens.size() * static_cast<size_t>(dim_), 0.0f);
  llama_batch batch = llama_batch_init(batch_, 0, 1);
  struct Free {
    llama_batch &b;
    ~Free() { llama_batch_free(b); }
  } free_batch{batch};
  size_t next = 0;
  while (next < tokens.size()) {
    // Fill one call with whole texts: up to `sequences_` of them and `batch_` tokens.
    batch.n_tokens = 0;
    const size_t first = next;
    while (next < tokens.size() && static_cast<int32_t>(next - first) < sequences_ &&
           batch.n_tokens + static_cast<int32_t>(tokens[next].size()) <= batch_) {
      const llama_seq_id seq = static_cast<llama_seq_id>(next - first);
      for (size_t p = 0; p < tokens[next].size(); ++p) {
        const int32_t i = batch.n_tokens++;
        batch.token[i] = tokens[next][p];
        batch.pos[i] = static_cast<llama_pos>(p);
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = seq;
        batch.logits[i] = true;
      }
      ++next;
    }
    if (llama_decode(ctx_, batch) != 0) throw std::runtime_error("encoder decode failed");
    for (size_t t = first; t < next; ++t) {
      const float *e = llama_get_embeddings_seq(ctx_, static_cast<llama_seq_id>(t - first));
      if (e == nullptr) throw std::runtime_error("encoder returned no embedding");
      double norm = 0;
      for (int32_t d = 0; d < dim_; ++d) norm += static_cast<double>(e[d]) * e[d];
      const float scale = norm > 0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
      for (int32_t d = 0; d < dim_; ++d) vectors[t * dim_ + d] = e[d] * scale;
    }
  }
  return vectors;
}
