#include "report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace adaqp::cli {
namespace {

struct DegreeStats {
  int64_t min = 0, max = 0, median = 0, isolated = 0, self_loops = 0;
  double mean = 0;
};

DegreeStats in_degree_stats(const Graph& g) {
  DegreeStats s;
  if (g.num_nodes == 0) return s;
  std::vector<int64_t> deg(g.num_nodes);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    deg[v] = g.in_degree(v);
    s.isolated += deg[v] == 0;
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) s.self_loops += g.indices[e] == v;
  }
  s.mean = static_cast<double>(g.num_edges()) / static_cast<double>(g.num_nodes);
  std::nth_element(deg.begin(), deg.begin() + g.num_nodes / 2, deg.end());
  s.median = deg[g.num_nodes / 2];
  const auto [lo, hi] = std::minmax_element(deg.begin(), deg.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

double percent(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

int64_t exchange_rows(const PartitionMeta& m) {
  int64_t rows = 0;
  for (const PartCounts& c : m.counts) rows += c.halo;
  return rows;
}

int64_t exchange_bytes(int64_t rows, int hidden) {
  return rows * hidden * 4;
}

}  // namespace

namespace {

// Per node type: nodes, whether any feature is non-zero, nodes in the split; per relation: edges.
struct TypeCounts {
  std::vector<int64_t> nodes, labelled, edges;
  std::vector<char> featured;
};

TypeCounts type_counts(const Graph& g) {
  TypeCounts c;
  const size_t types = g.node_types.size();
  c.nodes.assign(types, 0);
  c.labelled.assign(types, 0);
  c.featured.assign(types, 0);
  c.edges.assign(g.relations.size(), 0);
  for (size_t k = 0; k < types; ++k) {
    c.nodes[k] = g.type_offsets[k + 1] - g.type_offsets[k];
    const auto first = g.features.begin() + g.type_offsets[k] * g.feat_dim;
    const auto last = g.features.begin() + g.type_offsets[k + 1] * g.feat_dim;
    c.featured[k] = std::any_of(first, last, [](float x) { return x != 0.0f; });
  }
  for (const std::vector<int64_t>* split : {&g.train, &g.valid, &g.test}) {
    for (int64_t v : *split) {
      if (types > 0) ++c.labelled[g.node_type(v)];
    }
  }
  for (int32_t r : g.edge_relation) ++c.edges[r];
  return c;
}

}  // namespace

std::string dataset_text(const Graph& g) {
  const DegreeStats d = in_degree_stats(g);
  std::string out;
  out += fmt::format("dataset      {}\n", g.name);
  out += fmt::format("nodes        {}\n", g.num_nodes);
  out += fmt::format("edges        {} (directed; {} self-loops)\n", g.num_edges(), d.self_loops);
  out += fmt::format("features     {}\n", g.feat_dim);
  out += fmt::format("classes      {}{}\n", g.num_classes, g.multilabel ? " (multi-label)" : "");
  out += fmt::format("split        train {} / valid {} / test {}\n", g.train.size(), g.valid.size(),
                     g.test.size());
  out += fmt::format(
      "in-degree    min {} / median {} / mean {:.2f} / max {}; {} nodes without "
      "in-edges\n",
      d.min, d.median, d.mean, d.max, d.isolated);
  const TypeCounts t = type_counts(g);
  for (size_t k = 0; k < g.node_types.size(); ++k) {
    out += fmt::format("node type    {}: {} nodes{}{}\n", g.node_types[k], t.nodes[k],
                       t.featured[k] ? ", features" : "",
                       t.labelled[k] > 0 ? fmt::format(", {} in the split", t.labelled[k]) : "");
  }
  for (size_t r = 0; r < g.relations.size(); ++r) {
    const Relation& rel = g.relations[r];
    out += fmt::format("relation     ({}, {}, {}): {} edges\n", g.node_types[rel.src_type],
                       rel.name, g.node_types[rel.dst_type], t.edges[r]);
  }
  return out;
}

Json dataset_json(const Graph& g) {
  const DegreeStats d = in_degree_stats(g);
  const TypeCounts t = type_counts(g);
  Json types = Json::array(), relations = Json::array();
  for (size_t k = 0; k < g.node_types.size(); ++k) {
    types.push_back({{"name", g.node_types[k]},
                     {"nodes", t.nodes[k]},
                     {"features", t.featured[k] != 0},
                     {"split", t.labelled[k]}});
  }
  for (size_t r = 0; r < g.relations.size(); ++r) {
    const Relation& rel = g.relations[r];
    relations.push_back({{"source", g.node_types[rel.src_type]},
                         {"name", rel.name},
                         {"target", g.node_types[rel.dst_type]},
                         {"edges", t.edges[r]}});
  }
  return {{"name", g.name},
          {"nodes", g.num_nodes},
          {"edges", g.num_edges()},
          {"self_loops", d.self_loops},
          {"feat_dim", g.feat_dim},
          {"num_classes", g.num_classes},
          {"multilabel", g.multilabel},
          {"train", g.train.size()},
          {"valid", g.valid.size()},
          {"test", g.test.size()},
          {"in_degree",
           {{"min", d.min},
            {"median", d.median},
            {"mean", d.mean},
            {"max", d.max},
            {"isolated", d.isolated}}},
          {"node_types", types},
          {"relations", relations}};
}

std::string partition_text(const std::string& dir, const PartitionMeta& m) {
  std::string out;
  // contiguous reads no seed.
  out += fmt::format("partition    {} ({} of '{}', {} part{}{}{})\n", dir, m.method, m.dataset_name,
                     m.parts, m.parts == 1 ? "" : "s",
                     m.method == "contiguous" ? std::string() : fmt::format(", seed {}", m.seed),
                     m.sample_degree == 0
                         ? std::string()
                         : fmt::format(", on a sample of degree {}", m.sample_degree));
  out += fmt::format("edge cut     {} of {} edges ({:.2f}%)\n", m.edge_cut, m.num_edges,
                     percent(m.edge_cut, m.num_edges));
  if (!m.node_types.empty()) {
    out += fmt::format("types        {} node types, {} relations (heterogeneous)\n",
                       m.node_types.size(), m.relations.size());
  }
  out += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8} {:>10} {:>9}\n", "part",
                     "owned", "central", "marginal", "halo", "in-edges", "local%", "sent", "train");
  PartCounts total;
  for (int r = 0; r < m.parts; ++r) {
    const PartCounts& c = m.counts[r];
    out += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>7.2f}% {:>10} {:>9}\n", r,
                       c.owned, c.central, c.marginal, c.halo, c.in_edges,
                       percent(c.local_in_edges, c.in_edges), c.sent_rows, c.train);
    total.owned += c.owned;
    total.central += c.central;
    total.marginal += c.marginal;
    total.halo += c.halo;
    total.in_edges += c.in_edges;
    total.local_in_edges += c.local_in_edges;
    total.sent_rows += c.sent_rows;
    total.train += c.train;
  }
  out += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>7.2f}% {:>10} {:>9}\n", "all",
                     total.owned, total.central, total.marginal, total.halo, total.in_edges,
                     percent(total.local_in_edges, total.in_edges), total.sent_rows, total.train);
  const int64_t rows = exchange_rows(m);
  out += fmt::format("one full-precision halo exchange moves {} rows:", rows);
  for (int h : kReportHiddenSizes)
    out += fmt::format(" hidden {} -> {:.3f} MB;", h, exchange_bytes(rows, h) / 1e6);
  out.back() = '\n';
  return out;
}

Json partition_json(const std::string& dir, const PartitionMeta& m) {
  Json parts = Json::array(), bytes = Json::object();
  for (int r = 0; r < m.parts; ++r) {
    const PartCounts& c = m.counts[r];
    parts.push_back({{"part", r},
                     {"owned", c.owned},
                     {"central", c.central},
                     {"marginal", c.marginal},
                     {"halo", c.halo},
                     {"in_edges", c.in_edges},
                     {"local_in_edges", c.local_in_edges},
                     {"local_in_edge_percent", percent(c.local_in_edges, c.in_edges)},
                     {"sent_rows", c.sent_rows},
                     {"train", c.train}});
  }
  const int64_t rows = exchange_rows(m);
  for (int h : kReportHiddenSizes) bytes[std::to_string(h)] = exchange_bytes(rows, h);
  return {{"dir", dir},
          {"dataset", m.dataset_name},
          {"fingerprint", m.dataset_fingerprint},
          {"method", m.method},
          {"seed", m.seed},
          {"sample_degree", m.sample_degree},
          {"parts", m.parts},
          {"num_nodes", m.num_nodes},
          {"num_edges", m.num_edges},
          {"edge_cut", m.edge_cut},
          {"edge_cut_percent", percent(m.edge_cut, m.num_edges)},
          {"per_part", parts},
          {"exchange_rows", rows},
          {"exchange_bytes_by_hidden", bytes},
          {"node_types", m.node_types.size()},
          {"relations", m.relations.size()}};
}

namespace {

struct CoverTotals {
  int64_t cut_edges = 0, source_rows = 0, sources = 0, partials = 0;
  int64_t relation_sources = 0, relation_partials = 0;  // heterogeneous parts
  int64_t destinations = 0, first_sources = 0, first_partials = 0;
};

CoverTotals totals(const std::vector<PairCover>& pairs) {
  CoverTotals t;
  for (const PairCover& p : pairs) {
    t.cut_edges += p.cut_edges;
    t.source_rows += p.source_rows;
    t.sources += p.cover_sources;
    t.partials += p.cover_partials;
    t.relation_sources += p.relation_cover_sources;
    t.relation_partials += p.relation_cover_partials;
    t.destinations += p.destinations;
    t.first_sources += p.first_cover_sources;
    t.first_partials += p.first_cover_partials;
  }
  return t;
}

double ratio(int64_t part, int64_t whole) {
  return whole == 0 ? 1.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::string covers_text(const std::vector<PairCover>& pairs) {
  std::string out =
      "boundary covers (rows that carry every cut edge of a pair: source rows, as exchanged "
      "today, against a minimum vertex cover of source rows and partial sums)\n";
  out += fmt::format("{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "from", "to",
                     "cut edges", "rows", "cover", "sources", "partials", "ratio");
  for (const PairCover& p : pairs) {
    out += fmt::format("{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7.3f}\n", p.sender,
                       p.receiver, p.cut_edges, p.source_rows, p.cover_rows(), p.cover_sources,
                       p.cover_partials, ratio(p.cover_rows(), p.source_rows));
  }
  const CoverTotals t = totals(pairs);
  out += fmt::format("{:>13} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7.3f}\n", "all", t.cut_edges,
                     t.source_rows, t.sources + t.partials, t.sources, t.partials,
                     ratio(t.sources + t.partials, t.source_rows));
  if (t.relation_sources + t.relation_partials > 0) {
    out += fmt::format(
        "per relation (layers that aggregate each relation on its own, R-GCN: a partial sum serves "
        "one row and relation): cover {} rows ({} sources, {} partials), {:.3f} of the source "
        "rows\n",
        t.relation_sources + t.relation_partials, t.relation_sources, t.relation_partials,
        ratio(t.relation_sources + t.relation_partials, t.source_rows));
    out += fmt::format(
        "relation-first (R-GCN's rows transformed by W_r before they travel): {} rows, one per "
        "destination; a minimum cover {} rows ({} transformed source rows, {} partial sums), "
        "{:.3f} of them\n",
        t.destinations, t.first_sources + t.first_partials, t.first_sources, t.first_partials,
        ratio(t.first_sources + t.first_partials, t.destinations));
  }
  return out;
}

Json covers_json(const std::vector<PairCover>& pairs) {
  Json rows = Json::array();
  for (const PairCover& p : pairs) {
    rows.push_back({{"from", p.sender},
                    {"to", p.receiver},
                    {"cut_edges", p.cut_edges},
                    {"source_rows", p.source_rows},
                    {"cover_sources", p.cover_sources},
                    {"cover_partials", p.cover_partials}});
  }
  const CoverTotals t = totals(pairs);
  return {{"pairs", rows},
          {"cut_edges", t.cut_edges},
          {"source_rows", t.source_rows},
          {"cover_sources", t.sources},
          {"cover_partials", t.partials},
          {"relation_cover_sources", t.relation_sources},
          {"relation_cover_partials", t.relation_partials},
          {"destinations", t.destinations},
          {"first_cover_sources", t.first_sources},
          {"first_cover_partials", t.first_partials}};
}

}  // namespace adaqp::cli
