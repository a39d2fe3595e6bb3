// Contexts whose every token is computed the same whatever else its llama_decode holds, so a
// probability is a function of the request and the model alone (docs/performance.md, "Same
// request, same answer").
//
// ggml's CPU backend computes flash attention three ways: a query row at a time (any batch), in
// 64 x 64 tiles (batches of 64 tokens or more) and, for a lone token over 512 KV cells or more,
// split across the threads by KV range and merged. The three round differently, so a token read in
// a long prefill, in a short one after a prefix-cache hit, or alone came out with other bits. The
// backend's reference switch (ggml_backend_cpu_set_use_ref) keeps the first way for every batch
// (and skips the RMS-norm and multiply fusion); docs/performance.md has its cost. The weight
// matrices' side is native/ggml/gemv_q4k.cpp: ggml's Q4_K gemv gave a row other bits than its gemm.
//
// llama.cpp makes a context's CPU backend inside llama_init_from_model with no way to reach it, so
// the addon's link routes llama.cpp's call of ggml_backend_init_by_type through
// native/addon/backend_wrap.cpp, which sets the switch while a BatchInvariantScope is alive on the
// calling thread. Other contexts (whisper's, the sentence encoder's) keep ggml's fastest ways.
#pragma once

class BatchInvariantScope {
 public:
  BatchInvariantScope();
  ~BatchInvariantScope();
  BatchInvariantScope(const BatchInvariantScope &) = delete;
  BatchInvariantScope &operator=(const BatchInvariantScope &) = delete;
  // Whether CPU backends made now on this thread are to be batch-invariant.
  static bool active();
};
