#include "adaqp/partition/partition_in_slices.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <vector>

#include "adaqp/common/atomic_file.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/graph/slice_loader.h"
#include "adaqp/partition/part_from_slices.h"
#include "adaqp/partition/ptscotch_partitioner.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

// Writes this rank's part and meta.yaml into `tmp`, then moves `tmp` into place (see the header).
void write_and_rename(const std::string& dir, const fs::path& target, const fs::path& tmp,
                      const Part& part, const PartitionMeta& meta, Communicator& comm,
                      const CollectiveStep& step) {
  step([&] {
    std::error_code ec;
    if (fs::exists(target, ec))
      throw InputError(dir, "", "already exists; remove it or choose another partition directory");
    fs::create_directories(tmp / fmt::format("part-{}", part.rank), ec);
    if (ec) throw InputError(tmp.string(), "", "cannot create directory: " + ec.message());
    write_part_file(part, meta.dataset_fingerprint, partition_part_path(tmp.string(), part.rank));
    AtomicFile::write_text(partition_meta_path(tmp.string()), partition_meta_yaml(meta));
  });
  // In rank order: whoever still sees the folder moves it into place (once per filesystem).
  for (int r = 0; r < comm.size(); ++r) {
    step([&] {
      if (r != comm.rank()) return;
      std::error_code ec;
      if (!fs::exists(tmp, ec)) return;
      fs::rename(tmp, target, ec);
      if (ec)
        throw InputError(dir, "", "cannot move the finished partition into place: " + ec.message());
    });
  }
}

}  // namespace

void write_distributed_partition(const std::string& dir, const Part& part,
                                 const PartitionMeta& meta, Communicator& comm,
                                 const CollectiveStep& step) {
  const fs::path target = directory_path(dir);
  // One name for the temporary folder on every rank: rank 0's pid. Rank 0 removes what a stopped
  // run left before any rank writes.
  if (comm.rank() == 0) {
    remove_stale_temporaries(target.parent_path().string(),
                             target.filename().string() + AtomicFile::kTempInfix);
  }
  int64_t token = ::getpid();
  comm.broadcast(&token, sizeof token, 0);
  const fs::path tmp = temp_path(target.string(), static_cast<pid_t>(token));
  // A failure on any rank leaves nothing behind: every rank removes what it sees of the folder.
  try {
    write_and_rename(dir, target, tmp, part, meta, comm, step);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

DistributedPartition build_distributed_partition(const GraphSlice& s,
                                                 const std::vector<int32_t>& owner,
                                                 const PartitionOptions& opt, Communicator& comm) {
  DistributedPartition out;
  const double t0 = steady_now_s();
  SlicedPart built = build_part_from_slices(s, owner, comm);
  if (comm.rank() == 0) {
    const double mib = built.bytes_moved / 1048576.0, secs = steady_now_s() - t0;
    spdlog::info(
        "partition: redistributed {:.1f} MiB of nodes, edges and node data and built the "
        "parts in {:.2f} s ({:.1f} MiB/s)",
        mib, secs, mib / std::max(secs, 1e-9));
  }
  out.part = std::move(built.part);
  PartitionMeta& m = out.meta;
  m.dataset_name = s.name;
  m.dataset_fingerprint = slice_fingerprint(s, comm);
  m.method = to_string(opt.method);
  m.seed = opt.seed;
  m.sample_degree = opt.sample_degree;
  m.dataset_keys = opt.dataset_keys;
  if (opt.dataset_files) m.dataset_files = *opt.dataset_files;
  m.parts = opt.parts;
  m.num_nodes = s.num_nodes;
  m.num_edges = s.num_edges();
  comm.allreduce_sum(&m.num_edges, 1);
  m.feat_dim = s.feat_dim;
  m.num_classes = s.num_classes;
  m.multilabel = s.multilabel;
  m.edge_cut = built.edge_cut;
  const PartCounts mine = count_part(out.part);
  m.counts.resize(static_cast<size_t>(comm.size()));
  comm.allgather(&mine, m.counts.data(), sizeof mine);
  return out;
}

DistributedPartition partition_distributed(
    const DatasetSpec& spec, const PartitionOptions& opt, const std::string& dir, MPI_Comm mpi,
    Communicator& comm, const CollectiveStep& step,
    const std::function<void(const GraphSlice&, const std::array<int64_t, 3>&)>& before) {
  const double t0 = steady_now_s();
  DistributedPartition out;
  {
    const GraphSlice s = load_slice(spec, comm, step);
    std::array<int64_t, 3> split = {static_cast<int64_t>(s.train.size()),
                                    static_cast<int64_t>(s.valid.size()),
                                    static_cast<int64_t>(s.test.size())};
    comm.allreduce_sum(split.data(), split.size());
    step([&] {
      if (comm.rank() == 0) {  // before partitioning
        require_training_nodes(split[0], spec);
        require_features(s.feat_dim, spec);
        if (before) before(s, split);
      }
    });
    step([&] { require_ptscotch_options(s, comm.size(), opt); });
    // Outside a step: the others wait inside PT-Scotch for a rank that fails here alone, which
    // ends the job from that rank (cli::run_watched); a step would wait for them.
    const std::vector<int32_t> owner = ptscotch_owners(s, mpi, comm, opt);
    step([&] { require_every_part_owned(s, owner, opt.parts, comm); });
    out = build_distributed_partition(s, owner, opt, comm);
    if (comm.rank() == 0) {
      spdlog::info("partition: {} parts, edge cut {} of {} edges", opt.parts, out.meta.edge_cut,
                   out.meta.num_edges);
    }
  }
  write_distributed_partition(dir, out.part, out.meta, comm, step);
  if (comm.rank() == 0) {
    spdlog::info("partition: ptscotch start-up (load, partition, build, write) in {:.3f} s",
                 steady_now_s() - t0);
  }
  return out;
}

}  // namespace adaqp
