// The one cancellation signal of the native code: thrown on a worker thread when the work's abort
// flag turned true (the client went away, the engine closed). Every kernel throws this and only
// this; the thread that ran the work reports it as Status::cancelled.
#pragma once
#include <stdexcept>

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};
