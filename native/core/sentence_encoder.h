// A small sentence encoder (BERT-style GGUF, llama.cpp in embedding mode, mean pooling). It ranks
// windows of long texts; it is tiny (22M parameters) next to the decision model. Not thread-safe:
// one thread uses it (the N-API layer runs it on a TaskThread of its own, so it never waits
// behind the decision slots).
#pragma once
#include <string>
#include <vector>

#include "llama.h"

struct SentenceEncoderConfig {
  int32_t threads;       // CPU threads
  int32_t batch_tokens;  // tokens per encode call; also the longest text (with the trained context)
  int32_t sequences;     // texts encoded together in one call
};

class SentenceEncoder {
 public:
  // Loads the model; throws std::runtime_error when it cannot be loaded.
  SentenceEncoder(const std::string &path, const SentenceEncoderConfig &cfg);
  ~SentenceEncoder();
  SentenceEncoder(const SentenceEncoder &) = delete;
  SentenceEncoder &operator=(const SentenceEncoder &) = delete;

  int32_t dimensions() const { return dim_; }
  int32_t window_tokens() const { return window_; }  // tokens read of each text

  // One unit vector per text, texts.size() x dimensions(), row-major. A text longer than the
  // window is cut to it: callers send windows, not documents. Throws std::runtime_error.
  std::vector<float> embed(const std::vector<std::string> &texts);

 private:
  llama_model *model_ = nullptr;
  llama_context *ctx_ = nullptr;
  int32_t dim_ = 0, window_ = 0, batch_ = 0, sequences_ = 0;
};
