// The modelled time of one halo exchange. Every message travels on exactly one channel; all
// channels run concurrently (every send is posted at once); a channel that carries bytes is busy
// alpha + beta * bytes, an idle one 0; the exchange ends when the last channel does:
//     T = max over channels c with bytes_c > 0 of alpha_c + beta_c * bytes_c.
// Channels are the unit the fast solver splits on: for a fixed budget each channel is an
// independent knapsack. The per-link model (one channel per ordered pair) and the per-sender model
// (one channel per rank: its outgoing bandwidth is the bottleneck) fit this form. A model in which
// one message loads two resources at once (outgoing and incoming bandwidth together) does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace adaqp::assign {

// Cost of one channel: a fixed latency and a time per byte.
struct LinkCost {
  double alpha = 0;  // seconds, >= 0
  double beta = 0;   // seconds per byte, > 0
};

struct TimeModel {
  int world_size = 0;
  std::vector<LinkCost> channels;
  // channel_of_pair[s * world_size + r]: the channel carrying messages from s to r; -1 if s == r.
  std::vector<int32_t> channel_of_pair;
  // Per channel, its link class (kSameHost or kOtherHost, below); empty where the model has none.
  std::vector<int8_t> class_of_channel;

  int32_t channel(int sender, int receiver) const {
    return channel_of_pair[static_cast<size_t>(sender) * world_size + receiver];
  }
  // Busy time of channel c carrying `bytes`; every solver computes channel times through this.
  double channel_time(int32_t c, int64_t bytes) const {
    return bytes > 0 ? channels[c].alpha + channels[c].beta * static_cast<double>(bytes) : 0.0;
  }
};

// One channel per ordered pair: costs[s * world_size + r] (diagonal entries ignored). The model of
// an all-to-all exchange over independent point-to-point links.
TimeModel per_link_time_model(int world_size, const std::vector<LinkCost>& costs);

// One channel per sender rank: everything rank s sends shares costs[s] (world_size =
// costs.size()). The model of a rank whose outgoing bandwidth is the bottleneck.
TimeModel per_sender_time_model(const std::vector<LinkCost>& costs);

// Links of two classes: a receiver on the sender's host (shared memory) or on another host (the
// network). One channel per sender and class, kLinkClasses * s + class, so a rank's shared-memory
// and network transfers run at once, each at its own cost: costs[kLinkClasses * s + class]
// (world_size = host_of.size(); host_of[r] is rank r's host).
constexpr int kLinkClasses = 2;
constexpr int kSameHost = 0, kOtherHost = 1;
int link_class(const std::vector<int>& host_of, int sender, int receiver);
TimeModel per_sender_class_time_model(const std::vector<int>& host_of,
                                      const std::vector<LinkCost>& costs);

}  // namespace adaqp::assign
