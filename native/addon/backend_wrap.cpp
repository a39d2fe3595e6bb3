// llama.cpp's calls of ggml_backend_init_by_type come here (-Wl,--wrap, CMakeLists.txt): a CPU
// backend made inside a BatchInvariantScope computes attention one query row at a time whatever
// the batch (native/core/batch_invariance.h says why). An object of the addon itself, not of a
// static library, so the linker always has it.
#include "batch_invariance.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

extern "C" ggml_backend_t __real_ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char *params);

extern "C" ggml_backend_t __wrap_ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char *params) {
  ggml_backend_t backend = __real_ggml_backend_init_by_type(type, params);
  if (backend != nullptr && BatchInvariantScope::active() && ggml_backend_is_cpu(backend))
    ggml_backend_cpu_set_use_ref(backend, true);
  return backend;
}
