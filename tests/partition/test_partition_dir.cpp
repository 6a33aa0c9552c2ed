#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/partition_dir.h"
#include "array_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

Graph sample_graph() {
  GeneratorOptions o;
  o.num_nodes = 500;
  o.num_classes = 4;
  o.feat_dim = 5;
  o.avg_degree = 6;
  o.seed = 11;
  return generate_graph(o);
}

std::vector<char> bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

template <typename F>
std::string input_error(F&& f) {
  return test::error_of<InputError>(f);
}

void expect_same_part(const Part& a, const Part& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.num_parts, b.num_parts);
  EXPECT_EQ(a.global_num_nodes, b.global_num_nodes);
  EXPECT_EQ(a.owned_gid, b.owned_gid);
  EXPECT_EQ(a.num_central, b.num_central);
  EXPECT_EQ(a.halo_gid, b.halo_gid);
  EXPECT_EQ(a.halo_offsets, b.halo_offsets);
  EXPECT_EQ(a.local_indptr, b.local_indptr);
  EXPECT_EQ(a.local_indices, b.local_indices);
  EXPECT_EQ(a.halo_indptr, b.halo_indptr);
  EXPECT_EQ(a.halo_indices, b.halo_indices);
  EXPECT_EQ(a.owned_in_degree, b.owned_in_degree);
  EXPECT_EQ(a.owned_out_degree, b.owned_out_degree);
  EXPECT_EQ(a.halo_in_degree, b.halo_in_degree);
  EXPECT_EQ(a.halo_out_degree, b.halo_out_degree);
  EXPECT_EQ(a.send_offsets, b.send_offsets);
  EXPECT_EQ(a.send_idx, b.send_idx);
  EXPECT_EQ(a.feat_dim, b.feat_dim);
  EXPECT_EQ(a.features, b.features);
  ASSERT_EQ(a.feature_csr.has_value(), b.feature_csr.has_value());
  if (a.feature_csr) {
    EXPECT_EQ(a.feature_csr->indptr, b.feature_csr->indptr);
    EXPECT_EQ(a.feature_csr->columns, b.feature_csr->columns);
    EXPECT_EQ(a.feature_csr->values, b.feature_csr->values);
  }
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.multilabel, b.multilabel);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.multilabels, b.multilabels);
  EXPECT_EQ(a.global_split_counts, b.global_split_counts);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
}

PartitionOptions three_parts(const std::string& method) {
  PartitionOptions opt;
  opt.method = parse_partition_method(method);
  opt.parts = 3;
  opt.seed = 2;
  return opt;
}

TEST(PartitionStore, RoundTripsEveryPartAndTheMeta) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  const PartitionOptions opt = three_parts("metis");
  const std::string dir = tmp.str("part");
  const PartitionMeta written = write_partition(dir, g, opt);
  const PartitionMeta meta = read_partition_meta(dir);
  EXPECT_EQ(meta.format_version, kPartitionFormatVersion);
  EXPECT_EQ(meta.dataset_name, "synthetic");
  EXPECT_EQ(meta.dataset_fingerprint, fingerprint(g));
  EXPECT_EQ(meta.method, "metis");
  EXPECT_EQ(meta.seed, 2u);
  EXPECT_EQ(meta.parts, 3);
  EXPECT_EQ(meta.num_nodes, 500);
  EXPECT_EQ(meta.num_edges, g.num_edges());
  EXPECT_EQ(meta.feat_dim, 5);
  EXPECT_EQ(meta.num_classes, 4);
  EXPECT_FALSE(meta.multilabel);
  const std::vector<int32_t> owner = assign_parts(g, opt);
  EXPECT_EQ(meta.edge_cut, edge_cut(g, owner));
  EXPECT_EQ(meta.edge_cut, written.edge_cut);
  ASSERT_EQ(meta.counts.size(), 3u);
  int64_t owned = 0, halo = 0, sent = 0;
  for (int r = 0; r < 3; ++r) {
    const Part built = build_part(g, owner, r);
    const Part loaded = load_part(dir, r, 3);
    expect_same_part(loaded, built);
    const PartCounts& c = meta.counts[r];
    EXPECT_EQ(c.owned, built.num_owned());
    EXPECT_EQ(c.central, built.num_central);
    EXPECT_EQ(c.marginal, built.num_marginal());
    EXPECT_EQ(c.halo, built.num_halo());
    EXPECT_EQ(c.in_edges, built.num_local_edges() + built.num_halo_edges());
    EXPECT_EQ(c.local_in_edges, built.num_local_edges());
    EXPECT_EQ(c.sent_rows, static_cast<int64_t>(built.send_idx.size()));
    EXPECT_EQ(c.train, static_cast<int64_t>(built.train_idx.size()));
    owned += c.owned;
    halo += c.halo;
    sent += c.sent_rows;
  }
  EXPECT_EQ(owned, 500);
  EXPECT_EQ(halo, sent);
}

// On a directed graph (sample_graph without its edges u -> v where u < v and (u + v) % 3 == 0),
// where a halo node's in- and out-degrees differ: a writer or reader that swapped them would pass
// on a symmetric graph.
TEST(PartitionStore, RoundTripsTheDegreesOfADirectedGraph) {
  test::TempDir tmp;
  Graph g = sample_graph();
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      if (u < v && (u + v) % 3 == 0) continue;
      indices.push_back(u);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  g.indptr = std::move(indptr);
  g.indices = std::move(indices);
  g.validate("directed");
  const PartitionOptions opt = three_parts("metis");
  const std::string dir = tmp.str("part");
  write_partition(dir, g, opt);
  const std::vector<int32_t> owner = assign_parts(g, opt);
  bool uneven = false;
  for (int r = 0; r < 3; ++r) {
    const Part built = build_part(g, owner, r);
    uneven = uneven || built.halo_in_degree != built.halo_out_degree;
    expect_same_part(load_part(dir, r, 3), built);
  }
  EXPECT_TRUE(uneven) << "every halo node's in-degree equals its out-degree: not a directed test";
}

// Mostly-zero features (two values of 16 a row, as bag-of-words inputs) go to the part file as
// CSR, are read as CSR (a worker reading them sparse never makes them dense) and come back bit for
// bit, -0.0 and an all-zero row included; dense ones stay `features`.
TEST(PartitionStore, SparseFeaturesAreStoredAsCsrAndReadBackBitForBit) {
  test::TempDir tmp;
  GeneratorOptions o;
  o.num_nodes = 300;
  o.num_classes = 4;
  o.feat_dim = 16;
  o.avg_degree = 6;
  o.seed = 5;
  Graph sparse = generate_graph(o);
  for (int64_t v = 0; v < sparse.num_nodes; ++v) {
    float* row = &sparse.features[static_cast<size_t>(v * o.feat_dim)];
    for (int64_t j = 0; j < o.feat_dim; ++j)
      if (j != v % o.feat_dim && j != (v * 7 + 3) % o.feat_dim) row[j] = 0.0f;
  }
  sparse.features[3] = -0.0f;  // node 0 keeps columns 0 and 3: column 3 is a signed zero
  std::fill_n(sparse.features.begin() + 16, 16, 0.0f);  // node 1: nothing
  const PartitionOptions opt = three_parts("metis");
  const std::string sparse_dir = tmp.str("sparse"), dense_dir = tmp.str("dense");
  write_partition(sparse_dir, sparse, opt);
  write_partition(dense_dir, generate_graph(o), opt);
  const std::vector<int32_t> owner = assign_parts(sparse, opt);
  for (int r = 0; r < 3; ++r) {
    const std::string part = fmt::format("part-{}/part.bin", r);
    const test::Arrays csr = test::read_all((fs::path(sparse_dir) / part).string());
    EXPECT_EQ(csr.count("features"), 0u);
    EXPECT_EQ(
        csr.count("feature_indptr") + csr.count("feature_columns") + csr.count("feature_values"),
        3u);
    const test::Arrays dense = test::read_all((fs::path(dense_dir) / part).string());
    EXPECT_EQ(dense.count("features"), 1u);
    EXPECT_EQ(dense.count("feature_indptr"), 0u);
    // build_part gives the part as its file holds it: CSR, without a dense copy of its rows.
    Part built = build_part(sparse, owner, r);
    Part loaded = load_part(sparse_dir, r, 3);
    ASSERT_TRUE(loaded.feature_csr.has_value()) << "part " << r;
    ASSERT_TRUE(built.feature_csr.has_value()) << "part " << r;
    EXPECT_TRUE(loaded.features.empty());
    EXPECT_TRUE(built.features.empty());
    EXPECT_EQ(loaded.feature_csr->indptr, built.feature_csr->indptr);
    EXPECT_EQ(loaded.feature_csr->columns, built.feature_csr->columns);
    // The same file whether the writer gets the CSR or the dense rows (which it encodes itself).
    const fs::path from_csr = tmp.path() / fmt::format("csr-{}.bin", r);
    const fs::path from_dense = tmp.path() / fmt::format("dense-{}.bin", r);
    const std::string fingerprint = read_partition_meta(sparse_dir).dataset_fingerprint;
    write_part_file(built, fingerprint, from_csr.string());
    densify_features(built);
    write_part_file(built, fingerprint, from_dense.string());
    EXPECT_EQ(bytes_of(from_csr), bytes_of(from_dense)) << "part " << r;
    EXPECT_EQ(bytes_of(from_csr), bytes_of(fs::path(sparse_dir) / part)) << "part " << r;
    densify_features(loaded);
    EXPECT_FALSE(loaded.feature_csr.has_value());
    expect_same_part(loaded, built);
    EXPECT_FALSE(load_part(dense_dir, r, 3).feature_csr.has_value());
    EXPECT_FALSE(build_part(generate_graph(o), owner, r).feature_csr.has_value());
    ASSERT_EQ(loaded.features.size(), built.features.size());
    EXPECT_EQ(std::memcmp(loaded.features.data(), built.features.data(),
                          built.features.size() * sizeof(float)),
              0)
        << "part " << r << " differs in some value's bits";
    EXPECT_LT(fs::file_size(fs::path(sparse_dir) / part),
              fs::file_size(fs::path(dense_dir) / part));
  }
  Part first = load_part(sparse_dir, static_cast<int>(owner[0]), 3);
  densify_features(first);
  const auto at =
      std::find(first.owned_gid.begin(), first.owned_gid.end(), 0) - first.owned_gid.begin();
  EXPECT_TRUE(std::signbit(first.features[static_cast<size_t>(at * 16 + 3)]));
}

TEST(PartitionStore, SameSeedGivesByteIdenticalFiles) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  for (const char* method : {"metis", "random", "contiguous"}) {
    const std::string a = tmp.str(std::string(method) + "-a"),
                      b = tmp.str(std::string(method) + "-b");
    write_partition(a, g, three_parts(method));
    write_partition(b, g, three_parts(method));
    EXPECT_EQ(bytes_of(fs::path(a) / "meta.yaml"), bytes_of(fs::path(b) / "meta.yaml")) << method;
    for (int r = 0; r < 3; ++r) {
      const std::string file = "part-" + std::to_string(r) + "/part.bin";
      EXPECT_EQ(bytes_of(fs::path(a) / file), bytes_of(fs::path(b) / file))
          << method << " " << file;
    }
  }
}

// The error names the directory the job asked for, and the temporary name only as an aside.
TEST(PartitionStore, AnUncreatableDirectoryIsNamed) {
  test::TempDir tmp;
  std::ofstream(tmp.path() / "file") << "not a directory";
  const std::string dir = tmp.str("file/part");
  EXPECT_TRUE(test::contains(
      input_error([&] { write_partition(dir, sample_graph(), three_parts("metis")); }),
      dir + ": cannot create the partition directory: Not a directory (it is written first as "
            "part.tmp-"));
}

TEST(PartitionStore, RefusesAnExistingDirectoryAndLeavesItAlone) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / "keep.txt") << "mine";
  EXPECT_TRUE(test::contains(
      input_error([&] { write_partition(dir, sample_graph(), three_parts("metis")); }),
      "already exists"));
  EXPECT_EQ(bytes_of(fs::path(dir) / "keep.txt"), (std::vector<char>{'m', 'i', 'n', 'e'}));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) entries += e.path() != dir;
  EXPECT_EQ(entries, 0) << "a temporary directory was left behind";
}

TEST(PartitionStore, TrailingSlashNamesTheSameDirectory) {
  test::TempDir tmp;
  write_partition(tmp.str("part") + "/", sample_graph(), three_parts("random"));
  EXPECT_EQ(read_partition_meta(tmp.str("part")).parts, 3);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) entries += e.path() != tmp.str("part");
  EXPECT_EQ(entries, 0);
}

TEST(PartitionStore, FailureLeavesNoTemporaryDirectory) {
  test::TempDir tmp;
  PartitionOptions opt = three_parts("metis");
  opt.parts = 100000;  // more parts than nodes
  EXPECT_THROW(write_partition(tmp.str("part"), sample_graph(), opt), ConfigError);
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

TEST(PartitionStore, MismatchesAreInputErrors) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  const std::string dir = tmp.str("part");
  write_partition(dir, g, three_parts("random"));
  EXPECT_TRUE(test::contains(input_error([&] { load_part(dir, 0, 2); }),
                             "partition " + dir + " has 3 parts but the job runs 2 workers"));
  EXPECT_TRUE(test::contains(input_error([&] { read_partition_meta(tmp.str("nothing")); }),
                             "meta.yaml: missing: not a partition directory"));
  std::ofstream(tmp.str("file")) << "not a directory\n";
  EXPECT_TRUE(test::contains(input_error([&] { read_partition_meta(tmp.str("file")); }),
                             tmp.str("file") + ": is not a directory"));
}

// meta.yaml read strictly: one document, no key twice, and counts that agree with each other (a
// partition this build writes always has them); each refusal names the file and the field.
TEST(PartitionStore, EditedMetaYamlIsRefusedNamingTheField) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  write_partition(dir, sample_graph(), three_parts("random"));
  const std::string text = read_partition_meta_text(dir);
  const PartitionMeta meta = parse_partition_meta(text, "meta.yaml");
  const auto error = [](const std::string& edited) {
    return input_error([&] { parse_partition_meta(edited, "meta.yaml"); });
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.substr(0, at) + to + text.substr(at + from.size());
  };
  EXPECT_TRUE(test::contains(error(text + "seed: 7\n"), "meta.yaml: seed: appears twice"));
  EXPECT_TRUE(test::contains(error(text + "---\nfoo: 1\n"), "a second YAML document"));
  const std::string halo = fmt::format("halo: {}", meta.counts[0].halo);
  EXPECT_TRUE(test::contains(error(replaced(halo, "halo: 9223372036854775807")),
                             "meta.yaml: counts[0].halo: is 9223372036854775807: must be in [0, "));
  const std::string cut = fmt::format("edge_cut: {}", meta.edge_cut);
  EXPECT_TRUE(test::contains(error(replaced(cut, "edge_cut: -5")),
                             "meta.yaml: edge_cut: is -5: must be in [0, num_edges = "));
  EXPECT_TRUE(test::contains(
      error(replaced(cut, fmt::format("edge_cut: {}", meta.edge_cut - 1))),
      fmt::format("meta.yaml: edge_cut: is {}: must be the parts' in-edges from other parts, {}",
                  meta.edge_cut - 1, meta.edge_cut)));
  const std::string print = "dataset_fingerprint: " + meta.dataset_fingerprint;
  EXPECT_TRUE(test::contains(error(replaced(print, "dataset_fingerprint: zz")),
                             "meta.yaml: dataset_fingerprint: is 'zz': expected 32 hex digits"));
  // A width whose rows x feat_dim could overflow is refused before a part is read.
  const std::string dim = fmt::format("feat_dim: {}", meta.feat_dim);
  EXPECT_TRUE(test::contains(error(replaced(dim, "feat_dim: 4611686018427387904")),
                             "meta.yaml: feat_dim: is 4611686018427387904: must be in [0, "));
  const std::string edges = fmt::format("num_edges: {}", meta.num_edges);
  EXPECT_TRUE(test::contains(error(replaced(edges, "num_edges: 7")), "num_edges = 7"));
  const std::string train = fmt::format("train: {}", meta.counts[1].train);
  EXPECT_TRUE(
      test::contains(error(replaced(train, fmt::format("train: {}", meta.counts[1].owned + 1))),
                     "meta.yaml: counts[1].train: is "));
}

template <typename F>
std::string partition_config_error(F&& f) {
  return test::error_of<ConfigError>(f);
}

// Only the keys a method reads must match: contiguous ignores the seed, random the balance and
// sample keys; every other difference is refused, naming the key and both values.
TEST(PartitionStore, AnExistingPartitionMustMatchTheKeysItsMethodReads) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  for (const char* method : {"contiguous", "random", "metis"}) {
    const std::string dir = tmp.str(method);
    write_partition(dir, g, three_parts(method));
    const PartitionMeta meta = read_partition_meta(dir);
    EXPECT_NO_THROW(require_partition_matches(meta, three_parts(method), dir)) << method;
    PartitionOptions other = three_parts(method);
    other.seed = 9;
    const std::string seed =
        partition_config_error([&] { require_partition_matches(meta, other, dir); });
    EXPECT_EQ(seed.empty(), std::string(method) == "contiguous") << method << ": " << seed;
    if (!seed.empty()) {
      EXPECT_TRUE(test::contains(seed, "partition " + dir + " was made with partition.seed = "))
          << seed;
      EXPECT_TRUE(test::contains(seed, ", the job asks for 9: ")) << seed;
    }
    other = three_parts(method);
    other.balance_train = true;
    other.sample_degree = 4;
    const std::string metis_keys =
        partition_config_error([&] { require_partition_matches(meta, other, dir); });
    EXPECT_EQ(metis_keys.empty(), std::string(method) != "metis") << method << ": " << metis_keys;
    if (!metis_keys.empty()) {
      EXPECT_TRUE(
          test::contains(metis_keys, "partition.balance_train = false, the job asks for true") ||
          test::contains(metis_keys, "partition.sample_degree = 0, the job asks for 4"))
          << metis_keys;
    }
    other = three_parts(method);
    other.balance_types = true;
    const std::string types =
        partition_config_error([&] { require_partition_matches(meta, other, dir); });
    EXPECT_EQ(types.empty(), std::string(method) != "metis") << method << ": " << types;
    if (!types.empty()) {
      EXPECT_TRUE(test::contains(types, "partition.balance_types = false, the job asks for true"))
          << types;
    }
  }
  PartitionOptions parts = three_parts("random");
  parts.parts = 4;
  const std::string msg = partition_config_error(
      [&] { require_partition_matches(read_partition_meta(tmp.str("random")), parts, "P"); });
  EXPECT_TRUE(test::contains(msg,
                             "partition P was made with partition.parts = 3, the job asks "
                             "for 4: choose another partition.dir, or pass --repartition"))
      << msg;
  const std::string method = partition_config_error([&] {
    require_partition_matches(read_partition_meta(tmp.str("metis")), three_parts("random"), "P");
  });
  EXPECT_TRUE(test::contains(method, "partition.method = metis, the job asks for random"))
      << method;
}

// The dataset keys a partition was made from are recorded in meta.yaml and must match the job's; a
// directory without them (written before they were recorded) is not compared.
TEST(PartitionStore, AnExistingPartitionMustBeOfTheSameDataset) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  PartitionOptions made = three_parts("random");
  made.dataset_keys = {{"dataset.format", "ogb"}, {"dataset.path", "/data/cora"}};
  write_partition(tmp.str("p"), g, made);
  const PartitionMeta meta = read_partition_meta(tmp.str("p"));
  EXPECT_EQ(meta.dataset_keys, made.dataset_keys);
  EXPECT_TRUE(test::contains(read_partition_meta_text(tmp.str("p")), "path: /data/cora"));
  EXPECT_NO_THROW(require_partition_matches(meta, made, "P"));
  PartitionOptions other = made;
  other.dataset_keys[1].second = "/data/citeseer";
  const std::string msg =
      partition_config_error([&] { require_partition_matches(meta, other, "P"); });
  EXPECT_TRUE(test::contains(msg,
                             "partition P was made with dataset.path = '/data/cora', the job "
                             "asks for '/data/citeseer': choose another partition.dir"))
      << msg;
  other = made;
  other.dataset_keys.emplace_back("dataset.split", "public");
  EXPECT_TRUE(
      test::contains(partition_config_error([&] { require_partition_matches(meta, other, "P"); }),
                     "dataset.split = '(unset)', the job asks for 'public'"));
  PartitionMeta older = meta;
  older.dataset_keys.clear();
  EXPECT_NO_THROW(require_partition_matches(older, other, "P"));
  // A key added after the directory was written: it was made with the key's default.
  PartitionOptions later = made;
  later.dataset_keys.emplace_back("dataset.add_reverse", "false");
  later.dataset_key_defaults = {{"dataset.add_reverse", "false"}};
  EXPECT_NO_THROW(require_partition_matches(meta, later, "P"));
  later.dataset_keys.back().second = "true";
  EXPECT_TRUE(
      test::contains(partition_config_error([&] { require_partition_matches(meta, later, "P"); }),
                     "dataset.add_reverse = 'false', the job asks for 'true'"));
}

// dataset.path names a directory: reached by another name (a symbolic link to it), it is the same
// dataset; a path that names no directory here is compared as written.
TEST(PartitionStore, ADatasetDirectoryByAnotherNameIsTheSameDataset) {
  test::TempDir tmp;
  const fs::path data = tmp.path() / "data", link = tmp.path() / "link";
  fs::create_directories(data);
  fs::create_directory_symlink(data, link);
  PartitionOptions made = three_parts("random");
  made.dataset_keys = {{"dataset.path", link.string()}};
  write_partition(tmp.str("p"), sample_graph(), made);
  const PartitionMeta meta = read_partition_meta(tmp.str("p"));
  PartitionOptions job = made;
  job.dataset_keys[0].second = data.string();
  EXPECT_NO_THROW(require_partition_matches(meta, job, "P"));
  fs::create_directories(tmp.path() / "other");
  job.dataset_keys[0].second = (tmp.path() / "other").string();
  EXPECT_TRUE(
      test::contains(partition_config_error([&] { require_partition_matches(meta, job, "P"); }),
                     "dataset.path = '" + link.string() + "', the job asks for '"))
      << "another directory";
  fs::remove(link);
  job.dataset_keys[0].second = data.string();
  EXPECT_TRUE(
      test::contains(partition_config_error([&] { require_partition_matches(meta, job, "P"); }),
                     "dataset.path = '" + link.string() + "', the job asks for '"))
      << "a name that no longer leads to it";
}

// --repartition's replacement: the new partition takes the directory's place whole, nothing is
// left beside it; a replacement that fails leaves the old partition as it was.
TEST(PartitionStore, ReplaceSwapsInTheNewPartitionOrLeavesTheOld) {
  test::TempDir tmp;
  const Graph g = sample_graph();
  const std::string dir = tmp.str("part");
  write_partition(dir, g, three_parts("metis"));
  const std::vector<char> old_meta = bytes_of(fs::path(dir) / "meta.yaml");
  PartitionOptions bad = three_parts("random");
  bad.parts = 100000;  // more parts than nodes
  EXPECT_THROW(replace_partition(dir, g, bad), ConfigError);
  EXPECT_EQ(bytes_of(fs::path(dir) / "meta.yaml"), old_meta);
  const PartitionMeta meta = replace_partition(dir, g, three_parts("random"));
  EXPECT_EQ(meta.method, "random");
  EXPECT_EQ(read_partition_meta(dir).method, "random");
  expect_same_part(load_part(dir, 1, 3), [&] {
    test::TempDir fresh;
    write_partition(fresh.str("p"), g, three_parts("random"));
    return load_part(fresh.str("p"), 1, 3);
  }());
  int entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) entries += e.path() != dir;
  EXPECT_EQ(entries, 0) << "a temporary directory was left behind";
  EXPECT_TRUE(test::contains(
      input_error([&] { replace_partition(tmp.str("none"), g, three_parts("random")); }),
      "nothing to replace"));
}

TEST(PartitionStore, CorruptedOrTruncatedPartIsDetected) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  write_partition(dir, sample_graph(), three_parts("metis"));
  const fs::path file = fs::path(dir) / "part-1" / "part.bin";
  std::vector<char> bytes = bytes_of(file);
  std::vector<char> corrupted = bytes;
  corrupted[corrupted.size() / 2] ^= 0x01;
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(corrupted.data(), corrupted.size());
  const std::string crc = input_error([&] { load_part(dir, 1, 3); });
  EXPECT_TRUE(test::contains(crc, "checksum mismatch")) << crc;
  EXPECT_TRUE(test::contains(crc, file.string())) << crc;
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size() - 7);
  EXPECT_TRUE(test::contains(input_error([&] { load_part(dir, 1, 3); }), "truncated"));
  EXPECT_NO_THROW(load_part(dir, 0, 3));
}

// A part file of another dataset's partition whose structure is the same (one feature differs) is
// refused beside this meta.yaml, naming the file and both fingerprints; train and info --verify
// read parts this way.
TEST(PartitionStore, APartOfAnotherDatasetIsRefused) {
  test::TempDir tmp;
  Graph g = sample_graph();
  write_partition(tmp.str("a"), g, three_parts("metis"));
  g.features[0] += 1.0F;
  write_partition(tmp.str("b"), g, three_parts("metis"));
  const fs::path part = fs::path(tmp.str("a")) / "part-1" / "part.bin";
  fs::copy_file(fs::path(tmp.str("b")) / "part-1" / "part.bin", part,
                fs::copy_options::overwrite_existing);
  const std::string msg = input_error([&] { load_part(tmp.str("a"), 1, 3); });
  EXPECT_TRUE(test::contains(msg, part.string())) << msg;
  EXPECT_TRUE(test::contains(msg, "dataset_fingerprint")) << msg;
  const std::string expected =
      "but " + read_partition_meta(tmp.str("a")).dataset_fingerprint + " in meta.yaml";
  EXPECT_TRUE(test::contains(msg, expected)) << msg;
  EXPECT_TRUE(test::contains(msg, "a part made from another dataset")) << msg;
  EXPECT_NO_THROW(load_part(tmp.str("a"), 0, 3));
  // Array names are outside the checksums: one damaged byte in the fingerprint's name must not
  // turn the comparison off (an array a part does not hold is refused).
  std::string bytes;
  {
    std::ifstream in(part, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = bytes.find("dataset_fingerprint");
  ASSERT_NE(at, std::string::npos);
  bytes[at + std::string("dataset_fingerprint").size() - 1] = 'u';
  std::ofstream(part, std::ios::binary | std::ios::trunc) << bytes;
  const std::string renamed = input_error([&] { load_part(tmp.str("a"), 1, 3); });
  EXPECT_TRUE(test::contains(renamed, part.string())) << renamed;
  EXPECT_TRUE(test::contains(renamed, "array 'dataset_fingerprinu': not an array a part holds"))
      << renamed;
}

// Version 1 (every feature dense) is what builds before CSR features wrote; they are still read.
TEST(PartitionStore, VersionOneIsReadAndVersionZeroRefused) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  write_partition(dir, sample_graph(), three_parts("contiguous"));
  const fs::path meta = fs::path(dir) / "meta.yaml";
  std::ifstream in(meta);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto pos = text.find("format_version: 2");
  ASSERT_NE(pos, std::string::npos);
  for (const char v : {'1', '0'}) {
    std::string edited = text;
    edited[pos + 16] = v;
    std::ofstream(meta, std::ios::trunc) << edited;
    if (v == '1') {
      EXPECT_EQ(read_partition_meta(dir).format_version, 1);
    } else {
      const std::string msg = input_error([&] { read_partition_meta(dir); });
      EXPECT_TRUE(test::contains(msg, "format_version")) << msg;
      EXPECT_TRUE(test::contains(msg, "versions 1 to 2")) << msg;
    }
  }
}

TEST(PartitionStore, BadMetaFieldIsNamed) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  write_partition(dir, sample_graph(), three_parts("contiguous"));
  {
    std::ifstream in(fs::path(dir) / "meta.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto pos = text.find("format_version: 2");
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, 17, "format_version: 9");
    std::ofstream(fs::path(dir) / "meta.yaml", std::ios::trunc) << text;
  }
  const std::string msg = input_error([&] { read_partition_meta(dir); });
  EXPECT_TRUE(test::contains(msg, "format_version")) << msg;
  EXPECT_TRUE(test::contains(msg, "format_version: is 9, this build reads versions 1 to 2")) << msg;
}

}  // namespace
}  // namespace adaqp
