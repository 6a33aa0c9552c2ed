#include "adaqp/train/predictions.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "adaqp/common/atomic_file.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

constexpr int kNodeRowsTag = 32754;

// A rank's block on the wire: its ids (int64), then its rows.
std::vector<uint8_t> pack_block(const std::vector<int64_t>& gids, const NodeRows& rows) {
  const size_t id_bytes = gids.size() * sizeof(int64_t);
  std::vector<uint8_t> block(id_bytes + rows.bytes.size());
  if (id_bytes > 0) std::memcpy(block.data(), gids.data(), id_bytes);
  if (!rows.bytes.empty())
    std::memcpy(block.data() + id_bytes, rows.bytes.data(), rows.bytes.size());
  return block;
}

// Places `count` rows of `rank` into `out` (row v at v * row_bytes), marking `seen`; InvariantError
// for an id out of range or placed before. `ids` (int64) need not be aligned: they may be a
// block's.
void place_rows(const uint8_t* ids, const uint8_t* rows, int64_t count, int rank, size_t row_bytes,
                std::vector<uint8_t>& out, std::vector<uint8_t>& seen) {
  const auto n = static_cast<int64_t>(seen.size());
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    std::memcpy(&v, ids + i * sizeof(int64_t), sizeof(v));
    if (v < 0 || v >= n)
      throw InvariantError(
          fmt::format("node rows: rank {} sent global id {}, outside [0, {})", rank, v, n));
    if (seen[v] != 0)
      throw InvariantError(
          fmt::format("node rows: global id {} came twice (again from rank {})", v, rank));
    seen[v] = 1;
    std::memcpy(out.data() + v * row_bytes, rows + i * row_bytes, row_bytes);
  }
}

}  // namespace

size_t NodeRows::row_bytes() const {
  return npy_item_size(dtype) * static_cast<size_t>(columns > 0 ? columns : 1);
}

void write_node_rows(Communicator& comm, const std::vector<int64_t>& gids, int64_t global_num_nodes,
                     const NodeRows& rows, const std::string& path) {
  const size_t row_bytes = rows.row_bytes();
  ADAQP_CHECK(rows.bytes.size() == gids.size() * row_bytes,
              fmt::format("{} bytes of rows for {} ids of {} bytes each", rows.bytes.size(),
                          gids.size(), row_bytes));
  const int world = comm.size();
  const bool root = comm.rank() == 0;
  auto mine = static_cast<int64_t>(gids.size());
  std::vector<int64_t> counts(static_cast<size_t>(world));
  comm.allgather(&mine, counts.data(), sizeof(int64_t));

  const std::vector<uint8_t> own = root ? std::vector<uint8_t>{} : pack_block(gids, rows);
  const size_t entry_bytes = sizeof(int64_t) + row_bytes;
  std::vector<std::vector<uint8_t>> received(static_cast<size_t>(world));
  ExchangeBuffers b = ExchangeBuffers::none(world);
  if (!root) {
    b.send[0] = own.data();
    b.send_bytes[0] = own.size();
  } else {
    for (int r = 1; r < world; ++r) {
      received[r].resize(static_cast<size_t>(counts[r]) * entry_bytes);
      b.recv[r] = received[r].data();
      b.recv_bytes[r] = received[r].size();
    }
  }
  comm.exchange(b, ExchangeOptions(kNodeRowsTag))->wait();
  if (!root) return;

  std::vector<uint8_t> out(static_cast<size_t>(global_num_nodes) * row_bytes);
  std::vector<uint8_t> seen(static_cast<size_t>(global_num_nodes), 0);
  place_rows(reinterpret_cast<const uint8_t*>(gids.data()), rows.bytes.data(), counts[0], 0,
             row_bytes, out, seen);
  int64_t placed = counts[0];
  for (int r = 1; r < world; ++r) {
    const uint8_t* block = received[r].data();
    place_rows(block, block + counts[r] * sizeof(int64_t), counts[r], r, row_bytes, out, seen);
    placed += counts[r];
    std::vector<uint8_t>().swap(received[r]);  // freed as soon as placed
  }
  if (placed != global_num_nodes)
    throw InvariantError(
        fmt::format("node rows: the ranks hold {} of the {} nodes", placed, global_num_nodes));
  std::vector<int64_t> shape{global_num_nodes};
  if (rows.columns > 0) shape.push_back(rows.columns);
  const std::string head = npy_header(rows.dtype, shape);
  AtomicFile file(path);
  file.write(head.data(), head.size());
  file.write(out.data(), out.size());
  file.commit();
}

}  // namespace adaqp
