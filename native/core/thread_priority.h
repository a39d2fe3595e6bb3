// Inference threads run below the priority of Node's event loop: on a machine with as many busy
// inference threads as cores, the event loop would otherwise wait for a time slice before it
// could answer anything (an error, a 529, a health check) while every slot computes.
#pragma once
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

constexpr int kInferenceNice = 5;  // CFS weight about a third of the event loop's

// Lowers the calling thread's priority. Linux nice values are per thread, and threads it starts
// later (ggml's OpenMP team for its graphs) inherit the value.
inline void lower_this_thread_priority() {
#ifdef __linux__
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kInferenceNice);
#endif
}
