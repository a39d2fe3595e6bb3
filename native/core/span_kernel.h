// The span kernel: constrained copying of spans of the input text (see SpanJob in jobs.h).
#pragma once
#include "decoder.h"

SpanResult copy_spans(Decoder &decoder, const SpanJob &job);
