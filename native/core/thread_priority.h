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
// Background work (a correction read, a head refitted beside requests) gets a small share of a
// core that requests want: CFS weight 45 against an inference thread's 335, 12%, which slows a
// request sharing that core by about as much while it runs; the whole core when requests leave it.
// (Nice 19, weight 15, starved it to 4% under constant load: a refit took minutes.)
constexpr int kBackgroundNice = 14;

// Lowers the calling thread's priority. Linux nice values are per thread, and threads it starts
// later (ggml's OpenMP team for its graphs) inherit the value.
inline void lower_this_thread_priority(int nice = kInferenceNice) {
#ifdef __linux__
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
#endif
}
