#include "batch_invariance.h"

namespace {
thread_local int scopes = 0;
}

BatchInvariantScope::BatchInvariantScope() { ++scopes; }
BatchInvariantScope::~BatchInvariantScope() { --scopes; }
bool BatchInvariantScope::active() { return scopes > 0; }
