// A partition directory on disk: meta.yaml plus one folder per part (part-<r>/part.bin). Written
// atomically (temporary directory, then rename); a worker reads only meta.yaml and its own part.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/graph/graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct PartCounts {
  int64_t owned = 0, central = 0, marginal = 0, halo = 0, in_edges = 0, local_in_edges = 0;
  int64_t sent_rows = 0;  // rows this part sends in one exchange (sum over peers)
  int64_t train = 0;
};

// Version 2 may hold a part's features as CSR (data-formats.md); version 1 is still read.
inline constexpr int kPartitionFormatVersion = 2;

struct PartitionMeta {
  int format_version = kPartitionFormatVersion;
  std::string dataset_name;
  std::string dataset_fingerprint;
  std::string method;
  uint64_t seed = 0;
  int64_t sample_degree = 0;  // partition.sample_degree (written when not 0)
  // partition.balance_train / balance_edges / balance_types (written when true; absent in older
  // directories)
  bool balance_train = false, balance_edges = false, balance_types = false;
  // The dataset.* keys of the job that made it (PartitionOptions::dataset_keys; absent in older
  // directories, then not compared).
  std::vector<std::pair<std::string, std::string>> dataset_keys;
  // The dataset directory's files when it was made (PartitionOptions::dataset_files; absent in
  // older directories and for generated graphs, then not compared).
  std::vector<DatasetFile> dataset_files;
  int parts = 0;
  int64_t num_nodes = 0, num_edges = 0, feat_dim = 0, num_classes = 0;
  bool multilabel = false;
  int64_t edge_cut = 0;
  std::vector<PartCounts> counts;  // one per part
  // A heterogeneous dataset's node types and relations (graph.h; empty otherwise): the names the
  // parts' type and relation ids refer to.
  std::vector<std::string> node_types;
  std::vector<Relation> relations;
};

// The counts meta.yaml records for a part.
PartCounts count_part(const Part& p);
// The text of meta.yaml for `m`.
std::string partition_meta_yaml(const PartitionMeta& m);
// Writes one part file (ArrayFileWriter: temporary file, fsync, rename) of the dataset whose
// fingerprint is `dataset_fingerprint` (meta.yaml's): a part is read only beside a meta.yaml of the
// same dataset.
void write_part_file(const Part& p, const std::string& dataset_fingerprint,
                     const std::string& path);

// Partitions g with opt and writes the directory `dir`. Refuses (InputError) if `dir` exists.
PartitionMeta write_partition(const std::string& dir, const Graph& g, const PartitionOptions& opt);

// Partitions g with opt into a new directory beside `dir` (an existing partition directory), then
// exchanges the two in one rename (renameat2 RENAME_EXCHANGE: a reader sees the old partition or
// the new one, never a mix) and removes the old one. InputError naming `dir` on failure, which
// leaves `dir` as it was.
PartitionMeta replace_partition(const std::string& dir, const Graph& g,
                                const PartitionOptions& opt);

// ConfigError unless the partition in `dir` (meta.yaml: `meta`) was made with the options the job
// asks for: the same dataset keys (when meta.yaml records them), the same dataset files (when
// meta.yaml records them and the dataset directory is here: dataset_files.h), partition.method,
// partition.parts and the keys that method reads (seed: random, metis, ptscotch; sample_degree:
// metis, ptscotch; balance_train, balance_edges, balance_types: metis). The message names the key,
// both values and the directory, and the ways out (another partition.dir, or
// `adaqp train --repartition`).
void require_partition_matches(const PartitionMeta& meta, const PartitionOptions& opt,
                               const std::string& dir);

// Reads and checks meta.yaml (InputError naming the file and field on any problem).
PartitionMeta read_partition_meta(const std::string& dir);
// The text of meta.yaml, and its parse (`file` names it in errors); read_partition_meta is both.
std::string read_partition_meta_text(const std::string& dir);
PartitionMeta parse_partition_meta(const std::string& text, const std::string& file);

// <dir>/meta.yaml and <dir>/part-<rank>/part.bin.
std::string partition_meta_path(const std::string& dir);
std::string partition_part_path(const std::string& dir, int rank);

// Loads part `rank`; checks the part count equals `expected_parts`; verifies array checksums.
// Every mismatch is an InputError naming file and values. (The dataset behind the partition is
// compared by require_partition_matches.)
Part load_part(const std::string& dir, int rank, int expected_parts);
// The same with meta.yaml already read (`meta` must be that of `dir`).
Part load_part(const std::string& dir, int rank, const PartitionMeta& meta, int expected_parts);

}  // namespace adaqp
