// The option-scoring kernel: log P(option | prefix + branch) for every branch and option.
#pragma once
#include "decoder.h"

ScoreResult score_options(Decoder &decoder, const ScoreJob &job);
