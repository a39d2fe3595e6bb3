// An inference thread gives back its OpenMP team (ggml computes each graph on one) after every job.
// libgomp cuts the spin of a waiting thread from ~300,000 rounds to 100 once it manages more
// threads than there are cores, and idle teams count: with two slots, the model loader and the
// encoders each keeping one, a lone decision's threads slept and were woken at every barrier of
// its graphs (docs/performance.md: prefill 12-20% slower than llama-server on 2 cores). With teams
// given back, the count is what really runs, so the spin is cut only while jobs run side by side.
#pragma once
#ifdef _OPENMP
#include <omp.h>
#endif

inline void release_openmp_team() {
#ifdef _OPENMP
  omp_pause_resource_all(omp_pause_soft);
#endif
}
