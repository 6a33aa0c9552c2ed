#include "adaqp/partition/obtain_part.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "adaqp/comm/solo_work.h"
#include "adaqp/common/atomic_file.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/crc.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

constexpr int kPartTag = 32759;
constexpr double kMiB = 1024.0 * 1024.0;

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void send_to(Communicator& comm, int peer, const void* data, size_t bytes) {
  ExchangeBuffers b = ExchangeBuffers::none(comm.size());
  b.send[peer] = data;
  b.send_bytes[peer] = bytes;
  comm.exchange(b, ExchangeOptions(kPartTag))->wait();
}

// A receive from rank 0 while it sends the parts: bounded by its signs of life, not by the
// communicator's timeout, as this rank's turn may come after the other ranks' parts.
void recv_from_root(Communicator& comm, SoloWork& solo, void* data, size_t bytes) {
  ExchangeBuffers b = ExchangeBuffers::none(comm.size());
  b.recv[0] = data;
  b.recv_bytes[0] = bytes;
  solo.wait(*comm.exchange(b, ExchangeOptions(kPartTag)));
}

// A part loaded from `dir` when it holds this partition (its meta.yaml is `meta_text`).
std::optional<Part> load_if_same(const std::string& dir, int rank, const std::string& meta_text,
                                 const PartitionMeta& meta) {
  if (file_text(partition_meta_path(dir)) != meta_text) return std::nullopt;
  std::error_code ec;
  if (!fs::is_regular_file(partition_part_path(dir, rank), ec)) return std::nullopt;
  return load_part(dir, rank, meta, meta.parts);
}

// Rank 0: streams `path` to `peer`. Announces the size, then sends every chunk it announced even
// if reading fails (zeros then), ends with the CRC-32 and whether the read succeeded, and waits
// for the peer's word that all of it arrived.
int64_t send_part(Communicator& comm, int peer, const std::string& path, size_t chunk) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  int64_t header[2] = {ec ? 0 : static_cast<int64_t>(size), ec || !in ? 0 : 1};
  const std::string why = ec ? ec.message() : std::strerror(errno);
  send_to(comm, peer, header, sizeof header);
  if (header[1] == 0) {
    throw InputError(path, "",
                     fmt::format("cannot read the part to send it to rank {}: {}", peer, why));
  }
  std::vector<char> buf(std::min<size_t>(chunk, static_cast<size_t>(size)));
  uint32_t crc = kCrcEmpty;
  bool read_ok = true;
  const double t0 = steady_now_s();
  double last_log = 0;
  for (int64_t done = 0; done < header[0];) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(buf.size(), header[0] - done));
    if (read_ok && !in.read(buf.data(), static_cast<std::streamsize>(n))) read_ok = false;
    if (!read_ok) std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), 0);
    crc = crc_bytes(crc, buf.data(), n);
    send_to(comm, peer, buf.data(), n);
    done += static_cast<int64_t>(n);
    if (const double t = steady_now_s() - t0; t - last_log >= 5.0 && done < header[0]) {
      last_log = t;
      spdlog::info("partition: sending part {}: {:.0f} of {:.0f} MiB ({:.1f} MiB/s)", peer,
                   done / kMiB, header[0] / kMiB, done / kMiB / t);
    }
  }
  const uint32_t trailer[2] = {crc, read_ok ? 1u : 0u};
  send_to(comm, peer, trailer, sizeof trailer);
  // The next part waits for this one's arrival: parts sent into socket buffers one after another
  // would cross rank 0's link together, each at a share of it, and the signs of life queued
  // behind a part's bytes would take as long (a rank's own part longer than timeout_s).
  int32_t arrived = 0;
  ExchangeBuffers ack = ExchangeBuffers::none(comm.size());
  ack.recv[peer] = &arrived;
  ack.recv_bytes[peer] = sizeof arrived;
  try {
    comm.exchange(ack, ExchangeOptions(kPartTag))->wait();
  } catch (const CommError& e) {
    throw CommError(fmt::format("rank {} did not say its part arrived: {}", peer, e.what()));
  }
  if (!read_ok)
    throw InputError(path, "", "read failed while sending it to rank " + std::to_string(peer));
  return header[0];
}

// A receiving rank: writes its part from rank 0 into `path` (temporary name, CRC check, sync,
// rename). Receives everything announced and says so even after a local failure, then rethrows it.
// Its turn may come after other ranks' parts: rank 0's signs of life (`solo`) bound its waits.
int64_t receive_part(Communicator& comm, SoloWork& solo, int rank, const std::string& path,
                     size_t chunk) {
  int64_t header[2] = {0, 0};
  recv_from_root(comm, solo, header, sizeof header);
  if (header[1] == 0) throw InputError(path, "", "rank 0 could not read this rank's part");
  std::optional<AtomicFile> out;
  std::exception_ptr error;
  try {
    out.emplace(path);
  } catch (...) {
    error = std::current_exception();
  }
  std::vector<char> buf(std::min<size_t>(chunk, static_cast<size_t>(header[0])));
  uint32_t crc = kCrcEmpty;
  for (int64_t done = 0; done < header[0];) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(buf.size(), header[0] - done));
    recv_from_root(comm, solo, buf.data(), n);
    crc = crc_bytes(crc, buf.data(), n);
    if (!error) {
      try {
        out->write(buf.data(), n);
      } catch (...) {
        error = std::current_exception();
      }
    }
    done += static_cast<int64_t>(n);
  }
  uint32_t trailer[2] = {0, 0};
  recv_from_root(comm, solo, trailer, sizeof trailer);
  const int32_t arrived = 1;  // rank 0 sends the next part after this
  send_to(comm, 0, &arrived, sizeof arrived);
  if (error) std::rethrow_exception(error);
  if (trailer[1] == 0) throw InputError(path, "", "rank 0 failed while reading this rank's part");
  if (trailer[0] != crc)
    throw InputError(path, "",
                     fmt::format("received with CRC-32 {:08x}, rank 0 sent {:08x} (rank {})", crc,
                                 trailer[0], rank));
  out->commit();
  return header[0];
}

// After a failed receive: the part's folder made for it goes, and so do the cache's folder and its
// meta.yaml where they hold no other part (of another rank of this host), so that a job stopped at
// start-up leaves no half-made cache. Never throws: it runs while the receive's error unwinds.
void drop_unfilled_cache(const std::string& cache, const std::string& cached_part) noexcept {
  std::error_code ec;
  fs::remove(fs::path(cached_part).parent_path(), ec);  // only when empty
  const fs::path meta = fs::path(partition_meta_path(cache)).filename();
  for (fs::directory_iterator it(cache, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() != meta) return;
  }
  if (ec) return;
  fs::remove(partition_meta_path(cache), ec);
  fs::remove(cache, ec);
}

// Writes meta.yaml into the cache folder unless it is there already.
void cache_meta(const std::string& folder, const std::string& meta_text) {
  const std::string path = partition_meta_path(folder);
  if (file_text(path) != meta_text) AtomicFile::write_text(path, meta_text);
}

}  // namespace

std::string part_cache_path(const std::string& cache_root, const std::string& meta_text) {
  const uint32_t crc = crc_bytes(kCrcEmpty, meta_text.data(), meta_text.size());
  return (fs::path(cache_root) / fmt::format("partition-{:08x}", crc)).string();
}

ObtainedPart obtain_part(Communicator& comm, const std::string& dir,
                         const PartDistributionOptions& opt, const CollectiveStep& step) {
  ADAQP_CHECK(opt.chunk_bytes > 0, "part transfer chunk size > 0");
  const int rank = comm.rank(), world = comm.size();
  std::string meta_text;
  step([&] {
    if (rank != 0) return;
    meta_text = read_partition_meta_text(dir);
    const PartitionMeta meta = parse_partition_meta(meta_text, partition_meta_path(dir));
    if (meta.parts != world) {
      // A PT-Scotch partition is written part by part: --repartition cannot swap it in one step.
      const std::string again =
          meta.method == "ptscotch"
              ? fmt::format("partition.parts={} with another partition.dir, or remove {}", world,
                            dir)
              : fmt::format("partition.parts={} with --repartition, or another partition.dir",
                            world);
      throw ConfigError(fmt::format(
          "partition {} has {} parts but the job started {} worker{}: start it with mpirun -np {} "
          "(or srun -n {}), or partition the dataset again for {} ({})",
          dir, meta.parts, world, world == 1 ? "" : "s", meta.parts, meta.parts, world, again));
    }
  });
  meta_text = broadcast_text(comm, std::move(meta_text));

  ObtainedPart got;
  got.meta = parse_partition_meta(meta_text, partition_meta_path(dir));
  const std::string cache = part_cache_path(opt.cache_dir, meta_text);
  const std::string cached_part = partition_part_path(cache, rank);
  bool have = false;
  step([&] {
    if (rank == 0 || opt.mode != PartDistribution::kScatter) {
      if (std::optional<Part> p = load_if_same(dir, rank, meta_text, got.meta)) {
        got.part = std::move(*p);
        got.source = "read from the partition directory";
        got.path = partition_part_path(dir, rank);
        have = true;
        return;
      }
      if (rank == 0 || opt.mode == PartDistribution::kShared) {
        throw InputError(partition_part_path(dir, rank), "",
                         fmt::format("rank {} cannot read its part (missing, or meta.yaml there "
                                     "differs from rank 0's){}",
                                     rank,
                                     rank == 0 ? ""
                                               : ": partition.distribute shared needs a directory "
                                                 "every host sees; use auto or scatter"));
      }
    }
    {
      std::error_code ec;
      fs::create_directories(fs::path(cached_part).parent_path(), ec);
      if (ec) {
        throw InputError(fs::path(cached_part).parent_path().string(), "",
                         "cannot create this host's cache of received parts: " + ec.message() +
                             " (partition.local_dir; by default under $TMPDIR)");
      }
    }
    remove_stale_temporaries(fs::path(cached_part).parent_path().string());
    try {
      if (std::optional<Part> p = load_if_same(cache, rank, meta_text, got.meta)) {
        got.part = std::move(*p);
        got.source = "read from the host-local cache";
        got.path = cached_part;
        have = true;
      }
    } catch (const InputError& e) {
      spdlog::warn("dropping the cached part {}: {}", cached_part, e.what());
      std::error_code ec;
      fs::remove(cached_part, ec);
    }
    if (!have) cache_meta(cache, meta_text);
  });

  // Who needs a part from rank 0.
  std::vector<int32_t> need(static_cast<size_t>(world));
  const int32_t mine = have ? 0 : 1;
  comm.allgather(&mine, need.data(), sizeof mine);
  const int needing = static_cast<int>(std::count(need.begin(), need.end(), 1));
  if (rank == 0) {
    spdlog::info(
        "partition: distribute {}: {} of {} ranks read their part where they are, {} "
        "receive it from rank 0",
        to_string(opt.mode), world - needing, world, needing);
  }
  if (needing == 0) return got;

  // Rank 0 serves every needing rank in turn, even after one failed; the others receive theirs.
  const auto send_or_receive = [&](SoloWork& solo) {
    if (rank == 0) {
      std::exception_ptr first_error;
      for (int r = 1; r < world; ++r) {
        if (need[static_cast<size_t>(r)] == 0) continue;
        try {
          const double tp = steady_now_s();
          const int64_t bytes = send_part(comm, r, partition_part_path(dir, r), opt.chunk_bytes);
          const double s = steady_now_s() - tp;
          spdlog::info("partition: sent part {} ({:.2f} MiB) in {:.2f} s ({:.1f} MiB/s)", r,
                       bytes / kMiB, s, bytes / kMiB / std::max(s, 1e-9));
          got.bytes_sent += bytes;
          ++got.parts_sent;
        } catch (const CommError&) {
          throw;
        } catch (...) {
          if (!first_error) first_error = std::current_exception();
        }
      }
      if (first_error) std::rethrow_exception(first_error);
    } else if (!have) {
      try {
        got.bytes_received = receive_part(comm, solo, rank, cached_part, opt.chunk_bytes);
      } catch (...) {
        drop_unfilled_cache(cache, cached_part);
        throw;
      }
    }
  };
  const double t0 = steady_now_s();
  step([&] {
    // Every rank waits for rank 0 to have sent all parts, even after a failure of its own: the
    // agreement that follows is bounded by the communicator's timeout, the sends are not.
    SoloWork solo(comm, 0, "sending the parts");
    std::exception_ptr error;
    try {
      send_or_receive(solo);
    } catch (const SilentPeerError&) {
      throw;
    } catch (...) {
      error = std::current_exception();
    }
    solo.finish();
    if (error) std::rethrow_exception(error);
  });
  got.transfer_s = steady_now_s() - t0;
  if (rank == 0) {
    spdlog::info("partition: sent {} parts, {:.2f} MiB in {:.2f} s ({:.1f} MiB/s)", got.parts_sent,
                 got.bytes_sent / kMiB, got.transfer_s,
                 got.bytes_sent / kMiB / std::max(got.transfer_s, 1e-9));
  }
  step([&] {
    if (have) return;
    try {
      got.part = load_part(cache, rank, got.meta, world);
    } catch (const InputError& e) {
      // The copy is the file rank 0 read, byte for byte (the transfer's CRC-32 matched): the
      // damage is in the partition directory. The copy goes, so that no later run takes it.
      std::error_code ec;
      fs::remove(cached_part, ec);
      const std::string what = e.what();
      const std::string prefix = cached_part + ": ";
      throw InputError(partition_part_path(dir, rank), "",
                       (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what) +
                           " (found in the copy rank 0 sent, which is removed from the cache)");
    }
    got.source = "received from rank 0";
    got.path = cached_part;
    spdlog::info("received part {} ({:.2f} MiB) from rank 0, cached in {}", rank,
                 got.bytes_received / kMiB, cached_part);
  });
  return got;
}

}  // namespace adaqp
