#include "adaqp/train/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/train/finite_check.h"
#include "adaqp/train/layer_record.h"

namespace adaqp {

namespace {

// One rank's record of one epoch, gathered to every rank as raw bytes.
struct EpochRecord {
  int32_t epoch = 0;
  int32_t rank = 0;
  int32_t evaluated = 0;
  double loss = 0;
  double epoch_time_s = 0;
  double compute_time_s = 0;
  double local_agg_time_s = 0;
  double halo_agg_time_s = 0;
  double dense_time_s = 0;
  double quant_time_s = 0;
  double comm_time_s = 0;
  double exposed_comm_time_s = 0;
  double reduce_time_s = 0;
  int64_t bytes_sent = 0;
  double train = 0, valid = 0, test = 0;
};
static_assert(std::is_trivially_copyable<EpochRecord>::value, "EpochRecord is sent as bytes");

// A JSON number; non-finite values (a diverged loss) become null.
std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "null";
}

// "[1,2,3]"
std::string json_array(const int64_t* v, size_t n) {
  return fmt::format("[{}]", fmt::join(v, v + n, ","));
}

// `bytes_by_layer` holds the record's forward bytes per layer, then its backward bytes; `extra`
// holds further fields (layer_record_json).
std::string record_json(const EpochRecord& r, const int64_t* bytes_by_layer, size_t layers,
                        const std::string& extra) {
  std::string s = fmt::format(
      "{{\"epoch\":{},\"rank\":{},\"loss\":{},\"epoch_time_s\":{},\"compute_time_s\":{},"
      "\"local_agg_time_s\":{},\"halo_agg_time_s\":{},\"dense_time_s\":{},\"quant_time_s\":{},"
      "\"comm_time_s\":{},\"exposed_comm_time_s\":{},\"reduce_time_s\":{},\"bytes_sent\":{},"
      "\"bytes_sent_by_layer\":{{\"fwd\":{},\"bwd\":{}}}",
      r.epoch, r.rank, json_number(r.loss), json_number(r.epoch_time_s),
      json_number(r.compute_time_s), json_number(r.local_agg_time_s),
      json_number(r.halo_agg_time_s), json_number(r.dense_time_s), json_number(r.quant_time_s),
      json_number(r.comm_time_s), json_number(r.exposed_comm_time_s), json_number(r.reduce_time_s),
      r.bytes_sent, json_array(bytes_by_layer, layers),
      json_array(bytes_by_layer + layers, layers));
  if (r.evaluated) {
    s += fmt::format(",\"train_acc\":{},\"val_acc\":{},\"test_acc\":{}", json_number(r.train),
                     json_number(r.valid), json_number(r.test));
  }
  return s + extra + "}";
}

std::string summary_json(const RunSummary& s) {
  return fmt::format(
      "{{\"event\":\"summary\",\"best_val_acc\":{},\"test_acc_at_best_val\":{},"
      "\"final_test_acc\":{},\"mean_epoch_time_s\":{},\"epochs_per_s\":{},\"metric\":\"{}\","
      "\"epochs\":{},\"world_size\":{}}}",
      json_number(s.best_val_acc), json_number(s.test_acc_at_best_val),
      json_number(s.final_test_acc), json_number(s.mean_epoch_time_s), json_number(s.epochs_per_s),
      s.metric, s.epochs, s.world_size);
}

std::ofstream open_output(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string(), "", "cannot open for writing");
  return out;
}

// Writes the parameters via a temporary file and a rename, so a reader never sees half a file.
void write_params(const std::filesystem::path& path, const std::vector<float>& values) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out = open_output(tmp);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
    if (!out.flush()) throw InputError(tmp.string(), "", "write failed");
  }
  std::filesystem::rename(tmp, path);
}

// What rank 0 logs at start-up about every rank's part.
struct PartRecord {
  int64_t central = 0, marginal = 0;
  int64_t local_edges = 0, halo_edges = 0;
  int64_t send_rows = 0, halo_rows = 0;
};
static_assert(std::is_trivially_copyable<PartRecord>::value, "PartRecord is sent as bytes");

// Per rank: central and marginal nodes, the share of in-edges that are local, and the bytes of
// one full-precision exchange per layer (forward: boundary rows; backward: halo rows; layer 0's
// forward exchange happens once at start-up when the features are cached).
void log_parts(const Trainer& trainer, Communicator& comm) {
  const Part& p = trainer.part();
  PartRecord mine;
  mine.central = p.num_central;
  mine.marginal = p.num_marginal();
  mine.local_edges = p.num_local_edges();
  mine.halo_edges = p.num_halo_edges();
  mine.send_rows = static_cast<int64_t>(p.send_idx.size());
  mine.halo_rows = p.num_halo();
  std::vector<PartRecord> all(static_cast<size_t>(comm.size()));
  comm.allgather(&mine, all.data(), sizeof(PartRecord));
  if (comm.rank() != 0) return;
  spdlog::info("halo exchanges run {}", trainer.progress_thread()
                                            ? "on a progress thread, overlapped with A_local"
                                            : "on the compute thread");
  for (size_t r = 0; r < all.size(); ++r) {
    const PartRecord& a = all[r];
    std::vector<int64_t> fwd, bwd;
    for (int l = 0; l < trainer.num_layers(); ++l) {
      const int64_t row_bytes = trainer.layer_input_width(l) * static_cast<int64_t>(sizeof(float));
      fwd.push_back(a.send_rows * row_bytes);
      bwd.push_back(l == 0 ? 0 : a.halo_rows * row_bytes);
    }
    const int64_t edges = a.local_edges + a.halo_edges;
    spdlog::info(
        "rank {}: {} central, {} marginal nodes, {:.1f}% of in-edges local; bytes per "
        "full-precision exchange by layer: fwd {} bwd {}",
        r, a.central, a.marginal,
        edges > 0 ? 100.0 * static_cast<double>(a.local_edges) / static_cast<double>(edges) : 100.0,
        json_array(fwd.data(), fwd.size()), json_array(bwd.data(), bwd.size()));
  }
}

// Keeps the per-epoch records of `path` up to epoch `last` (dropping later ones and the summary),
// rewritten via a temporary file and a rename, and opens it for appending.
std::ofstream reopen_metrics(const std::filesystem::path& path, int last) {
  const std::string prefix = "{\"epoch\":";
  std::string kept, line;
  std::ifstream in(path);
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0 && std::stol(line.substr(prefix.size())) <= last)
      kept += line + '\n';
  }
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out = open_output(tmp);
    if (!(out << kept) || !out.flush()) throw InputError(tmp.string(), "", "write failed");
  }
  std::filesystem::rename(tmp, path);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) throw InputError(path.string(), "", "cannot open for appending");
  return out;
}

// check_finite, naming the last good checkpoint in the error.
void check_divergence(Trainer& trainer, double loss, int epoch, const std::string& checkpoint) {
  try {
    check_finite(trainer.model(), loss, epoch);
  } catch (const NumericalError& e) {
    throw NumericalError(std::string(e.what()) + (checkpoint.empty()
                                                      ? "; no checkpoint was written"
                                                      : "; last good checkpoint: " + checkpoint));
  }
}

void write_checkpoint(Trainer& trainer, const RunOptions& opt, const CheckpointProgress& progress) {
  const std::string path = checkpoint_path(opt.checkpoint_dir, progress.epoch);
  save_checkpoint(path, opt.checkpoint_header, progress, trainer.model(), trainer.optimizer());
  prune_checkpoints(opt.checkpoint_dir, kCheckpointsKept);
  spdlog::debug("wrote checkpoint {}", path);
}

}  // namespace

RunSummary run_training(Trainer& trainer, Communicator& comm, const RunOptions& opt) {
  const int world = comm.size();
  const bool root = comm.rank() == 0;
  const std::filesystem::path dir(opt.output_dir);
  std::ofstream metrics;
  if (root) {
    metrics = opt.start.epoch > 0 ? reopen_metrics(dir / "metrics.jsonl", opt.start.epoch)
                                  : open_output(dir / "metrics.jsonl");
    std::error_code ec;
    if (opt.checkpoint_every > 0) std::filesystem::create_directories(opt.checkpoint_dir, ec);
    if (ec) throw InputError(opt.checkpoint_dir, "", "cannot create directory: " + ec.message());
  }

  RunSummary summary;
  summary.metric = trainer.metric_name();
  summary.epochs = opt.epochs;
  summary.world_size = world;
  double total_time = 0;
  bool have_best = opt.start.have_best;
  summary.best_val_acc = opt.start.best_val;
  summary.test_acc_at_best_val = opt.start.test_at_best_val;
  std::string last_checkpoint =
      opt.start.epoch > 0 ? checkpoint_path(opt.checkpoint_dir, opt.start.epoch) : "";
  std::vector<EpochRecord> all(static_cast<size_t>(world));
  const auto layers = static_cast<size_t>(trainer.num_layers());
  std::vector<int64_t> layer_bytes(2 * layers), all_layer_bytes(2 * layers * world);
  const size_t layer_doubles = layer_record_size(trainer.num_layers());
  std::vector<double> all_layer_records(layer_doubles * world);
  if (root && trainer.link_model() != nullptr) {
    metrics << link_model_json(*trainer.link_model()) << '\n';
  }
  log_parts(trainer, comm);
  for (int epoch = opt.start.epoch + 1; epoch <= opt.epochs; ++epoch) {
    const EpochStats st = trainer.train_epoch(epoch);
    check_divergence(trainer, st.loss, epoch, last_checkpoint);
    EpochRecord rec;
    rec.epoch = epoch;
    rec.rank = comm.rank();
    rec.loss = st.loss;
    rec.epoch_time_s = st.epoch_time_s;
    rec.compute_time_s = st.compute_time_s;
    rec.local_agg_time_s = st.local_agg_time_s;
    rec.halo_agg_time_s = st.halo_agg_time_s;
    rec.dense_time_s = st.dense_time_s;
    rec.quant_time_s = st.quant_time_s;
    rec.comm_time_s = st.comm_time_s;
    rec.exposed_comm_time_s = st.exposed_comm_time_s;
    rec.reduce_time_s = st.reduce_time_s;
    rec.bytes_sent = st.bytes_sent;
    std::copy(st.bytes_forward.begin(), st.bytes_forward.end(), layer_bytes.begin());
    std::copy(st.bytes_backward.begin(), st.bytes_backward.end(), layer_bytes.begin() + layers);
    if (epoch % opt.eval_every == 0 || epoch == opt.epochs) {
      const EvalScores sc = trainer.evaluate();
      rec.evaluated = 1;
      rec.train = sc.train;
      rec.valid = sc.valid;
      rec.test = sc.test;
      if (!have_best || sc.valid > summary.best_val_acc) {
        have_best = true;
        summary.best_val_acc = sc.valid;
        summary.test_acc_at_best_val = sc.test;
      }
      summary.final_test_acc = sc.test;
    }
    comm.allgather(&rec, all.data(), sizeof(EpochRecord));
    comm.allgather(layer_bytes.data(), all_layer_bytes.data(),
                   layer_bytes.size() * sizeof(int64_t));
    const std::vector<double> layer_record = pack_layer_record(st, trainer.num_layers());
    comm.allgather(layer_record.data(), all_layer_records.data(), layer_doubles * sizeof(double));

    double slowest = 0, slowest_comm = 0, slowest_exposed = 0;
    int64_t bytes = 0;
    for (const EpochRecord& r : all) {
      slowest = std::max(slowest, r.epoch_time_s);
      slowest_comm = std::max(slowest_comm, r.comm_time_s);
      slowest_exposed = std::max(slowest_exposed, r.exposed_comm_time_s);
      bytes += r.bytes_sent;
    }
    total_time += slowest;
    const bool checkpoint_due =
        opt.checkpoint_every > 0 && (epoch % opt.checkpoint_every == 0 || epoch == opt.epochs);
    if (checkpoint_due) last_checkpoint = checkpoint_path(opt.checkpoint_dir, epoch);
    if (!root) continue;
    for (size_t r = 0; r < all.size(); ++r) {
      metrics << record_json(all[r], all_layer_bytes.data() + r * 2 * layers, layers,
                             layer_record_json(all_layer_records.data() + r * layer_doubles,
                                               trainer.num_layers()))
              << '\n';
    }
    metrics.flush();
    double predicted_s = 0;
    for (double t : st.assign.predicted_forward_s) predicted_s += t;
    for (double t : st.assign.predicted_backward_s) predicted_s += t;
    const std::string predicted =
        st.adaptive ? fmt::format(", predicted {:.6f} s", predicted_s) : "";
    const std::string scores = rec.evaluated ? fmt::format(" | train {:.4f} val {:.4f} test {:.4f}",
                                                           rec.train, rec.valid, rec.test)
                                             : "";
    spdlog::info(
        "epoch {:4d} | loss {:.4f}{} | {:.4f} s (comm {:.4f} s{}, exposed {:.4f} s) | {:.2f} MB "
        "sent",
        epoch, rec.loss, scores, slowest, slowest_comm, predicted, slowest_exposed,
        static_cast<double>(bytes) / 1e6);
    if (checkpoint_due) {
      write_checkpoint(trainer, opt,
                       {epoch, have_best, summary.best_val_acc, summary.test_acc_at_best_val});
    }
  }
  if (opt.epochs > opt.start.epoch) {
    summary.mean_epoch_time_s = total_time / (opt.epochs - opt.start.epoch);
    summary.epochs_per_s = summary.mean_epoch_time_s > 0 ? 1.0 / summary.mean_epoch_time_s : 0;
  }
  if (root) {
    metrics << summary_json(summary) << '\n';
    metrics.flush();
    if (!metrics) throw InputError((dir / "metrics.jsonl").string(), "", "write failed");
    write_params(dir / "params.bin", trainer.parameter_values());
  }
  return summary;
}

}  // namespace adaqp
