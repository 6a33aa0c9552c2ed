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

int link_class(const std::vector<int>& host_of, int sender, int receiver) {
  return host_of[sender] == host_of[receiver] ? kSameHost : kOtherHost;
}

TimeModel per_sender_class_time_model(const std::vector<int>& host_of,
                                      const std::vector<LinkCost>& costs) {
  const size_t world = host_of.size();
  if (world < 1 || costs.size() != kLinkClasses * world) {
    throw ConfigError("time model: " + std::to_string(costs.size()) + " link costs for " +
                      std::to_string(world) + " ranks and " + std::to_string(kLinkClasses) +
                      " link classes");
  }
  TimeModel model;
  model.world_size = static_cast<int>(world);
  model.channels = costs;
  for (size_t c = 0; c < costs.size(); ++c) {
    model.class_of_channel.push_back(static_cast<int8_t>(c % kLinkClasses));
  }
  model.channel_of_pair.assign(world * world, -1);
  for (int s = 0; s < model.world_size; ++s) {
    for (int r = 0; r < model.world_size; ++r) {
      if (s != r) {
        model.channel_of_pair[static_cast<size_t>(s) * world + r] =
            kLinkClasses * s + link_class(host_of, s, r);
      }
    }
  }
  return model;
}

}  // namespace adaqp::assign
