#include "adaqp/common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "adaqp/common/error.h"

namespace adaqp {

void setup_logging(int rank, const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw ConfigError("log level: unknown value '" + level +
                      "' (expected trace, debug, info, warn, error or off)");
  auto logger = std::make_shared<spdlog::logger>(
      "adaqp", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
}

}  // namespace adaqp
