// llama.cpp's, ggml's and whisper.cpp's log as JSON lines on stderr, in the shape of the
// service's own log (src/log.ts): {"time","level","msg","source"}. Their messages arrive in
// pieces from any thread; each thread's pieces are joined into whole lines. ggml has one log for
// both libraries: its lines carry the source of whichever set it last (whisper.cpp sets it again
// when it creates a context).
#pragma once
#include "ggml.h"

// Above GGML_LOG_LEVEL_ERROR: a threshold that drops every line.
constexpr int kLogNothing = GGML_LOG_LEVEL_ERROR + 1;

// Routes the libraries' log here.
void route_native_log();
// Lines below `level` (GGML_LOG_LEVEL_DEBUG ... ERROR, or kLogNothing) are dropped. Until the
// first call nothing is printed; thread-safe, may change at any time.
void set_native_log_threshold(int level);
