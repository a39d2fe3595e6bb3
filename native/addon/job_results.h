// A job's result (core/jobs.h) as the JS object src/binding.ts types (ScoreResult, SpanResult,
// TranscribeResult), keyed by the addon's interned names (names.h). Main thread only: Completions
// calls it when it settles the job's promise.
#pragma once
#include <napi.h>

#include "jobs.h"

Napi::Value JobToJs(Napi::Env env, const JobResult &r);
