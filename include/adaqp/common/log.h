// Logging set-up: spdlog's default logger, every line tagged with the worker's rank.
#pragma once

#include <string>

namespace adaqp {

// level: trace | debug | info | warn | error | off (ConfigError otherwise).
void setup_logging(int rank, const std::string& level = "info");

}  // namespace adaqp
