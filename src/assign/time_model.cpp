#include "adaqp/assign/time_model.h"

#include <string>

#include "adaqp/common/error.h"

namespace adaqp::assign {

TimeModel per_link_time_model(int world_size, const std::vector<LinkCost>& costs) {
  if (world_size < 1) throw ConfigError("time model: world size " + std::to_string(world_size));
  const size_t pairs = static_cast<size_t>(world_size) * world_size;
  if (costs.size() != pairs) {
    throw ConfigError("time model: " + std::to_string(costs.size()) +
                      " link costs for world size " + std::to_string(world_size) + " (expected " +
                      std::to_string(pairs) + ")");
  }
  TimeModel model;
  model.world_size = world_size;
  model.channel_of_pair.assign(pairs, -1);
  for (int s = 0; s < world_size; ++s) {
    for (int r = 0; r < world_size; ++r) {
      if (s == r) continue;
      model.channel_of_pair[static_cast<size_t>(s) * world_size + r] =
          static_cast<int32_t>(model.channels.size());
      model.channels.push_back(costs[static_cast<size_t>(s) * world_size + r]);
    }
  }
  return model;
}

TimeModel per_sender_time_model(const std::vector<LinkCost>& costs) {
  TimeModel model;
  model.world_size = static_cast<int>(costs.size());
  model.channels = costs;
  model.channel_of_pair.assign(costs.size() * costs.size(), -1);
  for (int s = 0; s < model.world_size; ++s) {
    for (int r = 0; r < model.world_size; ++r) {
      if (s != r) model.channel_of_pair[static_cast<size_t>(s) * model.world_size + r] = s;
    }
  }
  return model;
}

}  // namespace adaqp::assign
