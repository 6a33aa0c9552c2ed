// Logging set-up: spdlog's default logger, every line tagged with the worker's rank.
#pragma once

#include "adaqp/common/choices.h"

namespace adaqp {

void setup_logging(int rank, LogLevel level = LogLevel::kInfo);

}  // namespace adaqp
