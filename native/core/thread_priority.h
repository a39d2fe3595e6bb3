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
// Background work (a head refitted beside requests) takes the CPU only where requests leave it:
// CFS weight 15 against an inference thread's 335.
constexpr int kBackgroundNice = 19;

// Lowers the calling thread's priority. Linux nice values are per thread, and threads it starts
// later (ggml's OpenMP team for its graphs) inherit the value.
inline void lower_this_thread_priority(int nice = kInferenceNice) {
#ifdef __linux__
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
#endif
}
