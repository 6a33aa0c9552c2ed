// Bit-widths of quantized messages (docs/design.md, sections 5 and 7). The general input of a
// quantized exchange is one bit-width per message, for every layer and direction, as this rank
// sees it: what it sends and what it receives. Sender and receiver must hold the same widths for
// the rows of their link, so no per-row header travels. The uniform and random schemes are pure
// functions of the key and the global node id, so both ends compute them independently; the
// adaptive scheme (a solver) supplies the same structure.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/common/choices.h"
#include "adaqp/partition/boundary.h"

namespace adaqp {

enum class Direction : int { kForward = 0, kBackward = 1 };

// "fwd" or "bwd".
const char* direction_name(Direction dir);

// One layer and direction. Message order (Boundary):
//   forward:  sends the boundary's sent rows (peer by peer), receives its received rows;
//   backward: sends gradients of the received rows, receives gradients of the sent rows.
// Every entry is 2, 4 or 8. With full_precision (the adaptive scheme's choice for the whole
// exchange, docs/design.md, section 6) the exchange travels at full precision instead, through the
// full-precision path: no codec, no trace; send and recv are then not read.
struct MessageBits {
  std::vector<uint8_t> send;
  std::vector<uint8_t> recv;
  bool full_precision = false;
};

// The bit-widths of one training epoch's exchanges, and the key of its quantization noise.
// forward[l] / backward[l] belong to layer l; a layer without an entry travels at full precision.
// With trace_ranges, every quantized exchange also records the value range of each message sent
// (DistGraph::message_traces), the adaptive scheme's input for its next solve.
struct QuantPlan {
  uint64_t seed = 0;
  uint32_t epoch = 0;
  std::vector<MessageBits> forward, backward;
  bool trace_ranges = false;
  // False: the epoch runs Vanilla's schedule, each exchange completed before the local work
  // (DistGraph::set_quant_plan; for a graph built with overlap). The adaptive scheme's measured
  // choice where overlapping costs more than it hides (adaptive_policy.h).
  bool overlap = true;
};

// Keys of the messages of one direction (Boundary: a row's global id, or a partial sum's key), in
// message order (see MessageBits).
const std::vector<int64_t>& send_keys(const Boundary& boundary, Direction dir);
const std::vector<int64_t>& recv_keys(const Boundary& boundary, Direction dir);
// Per peer: where the messages of `dir` that this rank sends (receives) start.
const std::vector<int64_t>& send_offsets(const Boundary& boundary, Direction dir);
const std::vector<int64_t>& recv_offsets(const Boundary& boundary, Direction dir);

// The random scheme's width of the message with key `key`: uniform over {2, 4, 8}, from word 0 of
// philox_block(seed, epoch, layer, kRandomBits, key, block = direction).
int random_bit_width(uint64_t seed, uint32_t epoch, uint32_t layer, Direction dir, int64_t key);

// The schemes computed by every rank alike: uniform (every message at `bits`) and random.
struct SchemeOptions {
  BitScheme scheme = BitScheme::kUniform;  // kUniform or kRandom
  int bits = 8;                            // uniform scheme
  uint64_t seed = 0;
};

// The plan of `epoch` for a model of `layers` layers: every layer, both directions. ConfigError
// for bits outside {2, 4, 8}; InvariantError for the adaptive scheme (a solver: policy.h).
QuantPlan scheme_plan(const Boundary& boundary, int layers, const SchemeOptions& opt,
                      uint32_t epoch);

// The messages this rank sent in the last traced exchange of one layer and direction (QuantPlan::
// trace_ranges): their row width and the value range (max - min) of each, in send order.
struct MessageTrace {
  int64_t width = 0;
  std::vector<float> ranges;
};

// The traces of a run by direction and layer (the adaptive scheme's input for its next solve).
struct MessageTraces {
  std::vector<MessageTrace> by_dir[2];
  // The last traced exchange of `layer` and `dir`; null if none was traced.
  const MessageTrace* find(int layer, Direction dir) const;
};

}  // namespace adaqp
