#include "adaqp/train/epoch_loop.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "adaqp/comm/solo_work.h"
#include "adaqp/common/append_file.h"
#include "adaqp/common/atomic_file.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/cpu_features.h"
#include "adaqp/common/error.h"
#include "adaqp/model/host_tensor_bytes.h"
#include "adaqp/model/sparse_features.h"
#include "adaqp/quant/quantizer.h"
#include "adaqp/quant/widths.h"
#include "adaqp/train/finite_check.h"
#include "adaqp/train/metrics_record.h"

namespace adaqp {

namespace {

using Json = nlohmann::ordered_json;

// params.json, then params.bin, each via a temporary file and a rename, so a reader never sees
// half a file: the values, and what each run of them is (name, shape, offset in values).
void write_params(const std::filesystem::path& dir, const Trainer& trainer) {
  const std::vector<float> values = trainer.parameter_values();
  Json layout;
  layout["dtype"] = "<f4";
  layout["values"] = values.size();
  layout["parameters"] = Json::array();
  int64_t offset = 0;
  for (const auto& [name, shape] : trainer.parameter_shapes()) {
    layout["parameters"].push_back({{"name", name}, {"shape", shape}, {"offset", offset}});
    int64_t size = 1;
    for (const int64_t d : shape) size *= d;
    offset += size;
  }
  ADAQP_CHECK(offset == static_cast<int64_t>(values.size()),
              "params.json's shapes cover " + std::to_string(offset) + " of " +
                  std::to_string(values.size()) + " values");
  AtomicFile::write_text((dir / "params.json").string(), layout.dump(1) + "\n");
  AtomicFile out((dir / "params.bin").string());
  out.write(values.data(), values.size() * sizeof(float));
  out.commit();
}

// What rank 0 logs at start-up about every rank's part.
struct PartRecord {
  int64_t central = 0, marginal = 0;
  int64_t local_edges = 0, halo_edges = 0;
  int64_t send_rows = 0, halo_rows = 0;
  int64_t full_precision_bytes = 0;  // per epoch
  double sparse_density = -1;        // of layer 0's input kept sparse (A X, or X); -1 when dense
};
static_assert(std::is_trivially_copyable<PartRecord>::value, "PartRecord is sent as bytes");

// Per rank: central and marginal nodes, the share of in-edges that are local, and the bytes of
// one full-precision exchange per layer (forward: sent rows; backward: received rows, where the
// layer sends gradients back; the features' forward exchange happens once at start-up when they
// are cached). Sets the bytes all
// ranks would send per epoch at full precision and the rows of an exchange (collective).
void log_parts(const Trainer& trainer, Communicator& comm, RunSummary& summary) {
  const Part& p = trainer.part();
  PartRecord mine;
  mine.central = p.num_central;
  mine.marginal = p.num_marginal();
  mine.local_edges = p.num_local_edges();
  mine.halo_edges = p.num_halo_edges();
  mine.send_rows = trainer.boundary().sends();
  mine.halo_rows = trainer.boundary().recvs();
  mine.full_precision_bytes = trainer.full_precision_bytes_per_epoch();
  if (const SparseFeatures* s = trainer.sparse_layer_input()) mine.sparse_density = s->density();
  std::vector<PartRecord> all(static_cast<size_t>(comm.size()));
  comm.allgather(&mine, all.data(), sizeof(PartRecord));
  summary.exchange = to_string(trainer.exchange_layout());
  for (const PartRecord& a : all) {
    summary.full_precision_bytes_per_epoch += static_cast<double>(a.full_precision_bytes);
    summary.rows_per_exchange += a.send_rows;
    if (a.sparse_density >= 0) ++summary.sparse_features_ranks;
  }
  if (comm.rank() != 0) return;
  const char* schedule = trainer.device().is_cuda() ? "on the GPU's communication stream (NCCL)"
                         : trainer.progress_thread()
                             ? "on a progress thread, overlapped with A_local"
                             : "on the compute thread";
  spdlog::info("halo exchanges run {}", schedule);
  for (size_t r = 0; r < all.size(); ++r) {
    const PartRecord& a = all[r];
    std::vector<int64_t> fwd, bwd;
    for (int l = 0; l < trainer.num_layers(); ++l) {
      const LayerExchange e = trainer.layer_exchange(l);
      const int64_t row_bytes = e.width * static_cast<int64_t>(sizeof(float));
      fwd.push_back(e.cached ? 0 : a.send_rows * row_bytes);
      bwd.push_back(e.backward ? a.halo_rows * row_bytes : 0);
    }
    const int64_t edges = a.local_edges + a.halo_edges;
    spdlog::info(
        "rank {}: {} central, {} marginal nodes, {:.1f}% of in-edges local; {} rows sent, {} "
        "received per exchange ({} layout); bytes per full-precision exchange by layer: fwd [{}] "
        "bwd [{}]{}",
        r, a.central, a.marginal,
        edges > 0 ? 100.0 * static_cast<double>(a.local_edges) / static_cast<double>(edges) : 100.0,
        a.send_rows, a.halo_rows, to_string(trainer.exchange_layout()), fmt::join(fwd, ","),
        fmt::join(bwd, ","),
        a.sparse_density >= 0 ? fmt::format("; layer 0 reads its input sparse ({:.1f}% non-zero)",
                                            100 * a.sparse_density)
                              : std::string());
  }
}

// Keeps the records of `path` up to epoch `last` (metrics_kept_on_resume), rewritten via a
// temporary file and a rename, and opens it for appending.
AppendFile reopen_metrics(const std::filesystem::path& path, int last) {
  int cut_line = 0;
  const std::string kept = metrics_kept_on_resume(path.string(), last, &cut_line);
  AtomicFile::write_text(path.string(), kept);
  if (cut_line > 0) {
    spdlog::warn("{}: line {}: dropped a record that a failed write cut short", path.string(),
                 cut_line);
  }
  std::set<int> epochs;
  std::istringstream lines(kept);
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line);
    if (!j.contains("event")) epochs.insert(j["epoch"].get<int>());
  }
  if (static_cast<int>(epochs.size()) < last) {
    spdlog::warn(
        "{}: holds the records of {} of the epochs 1-{} this run resumes after (were they written "
        "to another output.dir?); the summary covers the epochs from {} on",
        path.string(), epochs.size(), last, last + 1);
  }
  return AppendFile(path.string(), /*truncate=*/false);
}

// The end of a divergence error: where training can be taken up again.
std::string checkpoint_text(const std::string& checkpoint) {
  return checkpoint.empty() ? "; no checkpoint was written"
                            : "; last good checkpoint: " + checkpoint;
}

// The epoch; a row the codec could not quantize (met on this rank only, so the error is not
// collective: the job aborts) gets the advice and checkpoint of the collective checks below
// (`first_epoch`: a fresh run's first, whose messages all come before any optimizer step).
EpochStats train_one_epoch(Trainer& trainer, int epoch, bool first_epoch,
                           const std::string& checkpoint) {
  try {
    return trainer.train_epoch(epoch);
  } catch (const quant::NonFiniteError& e) {
    throw quant::NonFiniteError(e, divergence_advice(first_epoch) + checkpoint_text(checkpoint));
  }
}

// check_finite, naming the last good checkpoint in the error.
void check_divergence(Trainer& trainer, double loss, int epoch, bool first_epoch,
                      const std::string& checkpoint) {
  try {
    check_finite(trainer.model(), loss, epoch, first_epoch);
  } catch (const NumericalError& e) {
    throw NumericalError(std::string(e.what()) + checkpoint_text(checkpoint));
  }
}

// Epoch `progress.epoch`'s checkpoint, as the model and optimizer are now.
ArrayFileWriter checkpoint_now(Trainer& trainer, const RunOptions& opt,
                               const CheckpointProgress& progress, const ModelSnapshot* best) {
  CheckpointHeader header = opt.checkpoint_header;
  header.embedding = trainer.has_embedding();
  return checkpoint_arrays(header, progress, trainer.model(), trainer.optimizer(), best);
}

// Writes epoch `epoch`'s checkpoint and prunes the older ones; `skipped`: checkpoints the resume
// passed over (prune_checkpoints), less the one written now.
void write_checkpoint(const ArrayFileWriter& arrays, const RunOptions& opt, int epoch,
                      std::vector<int>& skipped) {
  const std::string path = checkpoint_path(opt.checkpoint_dir, epoch);
  arrays.write(path);
  skipped.erase(std::remove(skipped.begin(), skipped.end(), epoch), skipped.end());
  prune_checkpoints(opt.checkpoint_dir, kCheckpointsKept, epoch, skipped);
  spdlog::debug("wrote checkpoint {}", path);
}

// The progress line of one epoch (rank 0): loss, scores when evaluated, the slowest rank's times,
// everyone's bytes.
void log_progress(const std::vector<EpochRecord>& all, const EpochRecord& rec,
                  const RunOptions& opt) {
  double slowest = 0, slowest_comm = 0, slowest_exposed = 0, bytes = 0, predicted_s = 0;
  for (const EpochRecord& r : all) {
    slowest = std::max(slowest, r.stats.epoch_time_s);
    slowest_comm = std::max(slowest_comm, r.stats.comm_time_s);
    slowest_exposed = std::max(slowest_exposed, r.stats.exposed_comm_time_s);
    bytes += static_cast<double>(r.stats.bytes_sent);
  }
  for (double t : rec.stats.assign.predicted_forward_s) predicted_s += t;
  for (double t : rec.stats.assign.predicted_backward_s) predicted_s += t;
  const std::string predicted =
      rec.stats.adaptive ? fmt::format(", model {:.6f} s", predicted_s) : "";
  const std::string scores =
      rec.evaluated
          ? fmt::format(" | train {:.4f} val {:.4f} (loss {:.4f}) test {:.4f}", rec.scores.train,
                        rec.scores.valid, rec.scores.valid_loss, rec.scores.test)
          : "";
  spdlog::info(
      "epoch {:4d}/{} | loss {:.4f}{} | {:.4f} s (comm {:.4f} s{}, exposed {:.4f} s) | {:.3f} "
      "MB sent by all ranks",
      rec.stats.epoch, opt.epochs, rec.stats.loss, scores, slowest, slowest_comm, predicted,
      slowest_exposed, bytes / 1e6);
}

// Sums over the epochs run, for the summary (rank 0).
struct Totals {
  int epochs = 0;
  double slowest_s = 0;  // sum over epochs of the slowest rank's epoch time
  double bytes = 0;
  double compute_s = 0, exposed_s = 0, reduce_s = 0, assign_s = 0, quant_s = 0;
  std::array<double, quant::kNumMessageWidths> widths{};

  // The epoch's records of every rank: the slowest rank's time split, everyone's bytes.
  void add(const std::vector<EpochRecord>& all) {
    const EpochRecord* slow = &all[0];
    for (const EpochRecord& r : all) {
      if (r.stats.epoch_time_s > slow->stats.epoch_time_s) slow = &r;
      bytes += static_cast<double>(r.stats.bytes_sent);
      for (const auto* hist : {&r.stats.assign.hist_forward, &r.stats.assign.hist_backward}) {
        for (const auto& h : *hist) {
          for (int b = 0; b < quant::kNumMessageWidths; ++b) widths[b] += static_cast<double>(h[b]);
        }
      }
    }
    const EpochStats& s = slow->stats;
    ++epochs;
    slowest_s += s.epoch_time_s;
    const double assign = s.adaptive ? s.assign.assign_time_s : 0.0;
    compute_s += s.compute_time_s - assign;
    exposed_s += s.exposed_comm_time_s;
    reduce_s += s.reduce_time_s;
    assign_s += assign;
    quant_s += s.quant_time_s;
  }
};

void summarize(const Totals& t, bool adaptive, RunSummary& s) {
  if (t.epochs == 0) return;
  const double n = t.epochs;
  s.mean_epoch_time_s = t.slowest_s / n;
  s.epochs_per_s = s.mean_epoch_time_s > 0 ? 1.0 / s.mean_epoch_time_s : 0;
  s.bytes_per_epoch = t.bytes / n;
  s.compute_s = t.compute_s / n;
  s.exposed_comm_s = t.exposed_s / n;
  s.reduce_s = t.reduce_s / n;
  s.assign_s = t.assign_s / n;
  s.quant_s = t.quant_s / n;
  s.adaptive = adaptive;
  const double messages = std::accumulate(t.widths.begin(), t.widths.end(), 0.0);
  for (int b = 0; b < quant::kNumMessageWidths; ++b) {
    s.bit_shares[b] = messages > 0 ? t.widths[b] / messages : 0;
  }
}

}  // namespace

std::string describe(const RunSummary& s) {
  // After a resume the means cover this run's epochs only: say which.
  const std::string epochs = s.first_epoch > 1
                                 ? fmt::format("epochs {}-{} (resumed)", s.first_epoch, s.epochs)
                                 : fmt::format("{} epochs", s.epochs);
  std::string text = fmt::format(
      "summary: best val {} {:.4f} (epoch {}), test {:.4f} at best val, final test {:.4f} | {}{} "
      "on {} worker(s) ({}), {:.4f} s/epoch ({:.2f} epochs/s)",
      s.metric, s.best_val_acc, s.best_epoch, s.test_acc_at_best_val, s.final_test_acc, epochs,
      s.stopped_early ? " (stopped early)" : "", s.world_size, s.device, s.mean_epoch_time_s,
      s.epochs_per_s);
  if (s.full_precision_bytes_per_epoch == 0) {
    // One worker: nothing is exchanged.
  } else if (s.bytes_per_epoch >= s.full_precision_bytes_per_epoch) {
    text += fmt::format("\nexchanges: {:.3f} MB/epoch at full precision", s.bytes_per_epoch / 1e6);
  } else {
    const double less = s.full_precision_bytes_per_epoch / std::max(s.bytes_per_epoch, 1.0);
    text +=
        fmt::format("\nexchanges: {:.3f} MB/epoch, {:.0f}% of full precision's {:.3f} MB/epoch{}",
                    s.bytes_per_epoch / 1e6, 100 / less, s.full_precision_bytes_per_epoch / 1e6,
                    less >= 1.5 ? fmt::format(" ({:.1f}x less)", less) : "");
    if (s.adaptive) {
      std::vector<int> widths;
      std::vector<std::string> shares;
      for (int b = 0; b < quant::kNumMessageWidths; ++b) {
        widths.push_back(quant::message_width(b));
        shares.push_back(fmt::format("{:.0f}%", 100 * s.bit_shares[b]));
      }
      text += fmt::format("; adaptive widths {} bits: {} of messages", fmt::join(widths, "/"),
                          fmt::join(shares, " / "));
    }
  }
  if (!s.memory.empty()) {
    // The largest rank's peak of each phase.
    std::string phases;
    bool cuda = false;
    for (int k = 0; k < kPhases; ++k) {
      int64_t rss = 0, tensors = 0, device = 0;
      for (const PhasePeaks& rank : s.memory) {
        rss = std::max(rss, rank[k].rss_bytes);
        tensors = std::max(tensors, rank[k].host_tensor_bytes);
        device = std::max(device, rank[k].device_bytes);
        cuda = cuda || rank[k].device_used_bytes > 0;
      }
      phases +=
          fmt::format("{}{} {:.2f} GiB", k > 0 ? " | " : "", phase_name(static_cast<Phase>(k)),
                      static_cast<double>(rss) / (1 << 30));
      if (static_cast<Phase>(k) == Phase::kTraining && tensors > 0)
        phases +=
            fmt::format(" (host tensors {:.2f} GiB)", static_cast<double>(tensors) / (1 << 30));
      if (cuda)
        phases += fmt::format(" (device {:.2f} GiB)", static_cast<double>(device) / (1 << 30));
    }
    text += fmt::format("\npeak memory, the largest rank's in each phase{}: {}",
                        s.memory_resets ? "" : " (since the process started)", phases);
  }
  if (!s.seconds.empty()) {
    // The rank whose phases before training took longest together, and its time in each (the
    // phases' maxima over ranks may come from different ranks: their sum is no rank's).
    const auto startup_s = [](const PhaseSeconds& rank) {
      double sum = 0;
      for (int k = 0; k < static_cast<int>(Phase::kTraining); ++k) sum += rank[k];
      return sum;
    };
    size_t slowest = 0;
    for (size_t r = 1; r < s.seconds.size(); ++r) {
      if (startup_s(s.seconds[r]) > startup_s(s.seconds[slowest])) slowest = r;
    }
    std::string phases;
    for (int k = 0; k < static_cast<int>(Phase::kTraining); ++k) {
      phases += fmt::format("{}{} {:.2f} s", k > 0 ? " | " : "", phase_name(static_cast<Phase>(k)),
                            s.seconds[slowest][k]);
    }
    text += fmt::format("\nstart-up of the slowest rank (rank {}): {:.2f} s ({})", slowest,
                        startup_s(s.seconds[slowest]), phases);
  }
  const double total = s.compute_s + s.exposed_comm_s + s.reduce_s + s.assign_s;
  if (total > 0) {
    auto pct = [&](double v) { return 100 * v / total; };
    text += fmt::format(
        "\nepoch time (slowest rank): compute {:.0f}% | waiting for exchanges {:.0f}% | loss and "
        "gradient all-reduce {:.0f}%",
        pct(s.compute_s), pct(s.exposed_comm_s), pct(s.reduce_s));
    // What only the quantized modes spend.
    if (s.adaptive) text += fmt::format(" | bit-width assignment {:.0f}%", pct(s.assign_s));
    if (s.quant_s > 0) text += fmt::format("; (de)quantization {:.1f} ms/epoch", 1e3 * s.quant_s);
  }
  return text;
}

void require_metrics_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InputError(path, "", "is not a regular file: training writes its records there");
}

std::string metrics_kept_on_resume(const std::string& path, int last, int* cut_line) {
  require_metrics_file(path);  // opening a FIFO to read would wait for a writer for ever
  std::string kept, line, link_model;
  std::ifstream in(path);
  if (cut_line != nullptr) *cut_line = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    if (in.eof()) {
      if (cut_line != nullptr) *cut_line = number;
      break;
    }
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      throw InputError(path, fmt::format("line {}", number), "not a JSON record");
    // A link model is kept where a kept epoch record follows it: the model of the process that
    // ran those epochs.
    if (j.value("event", "") == "link_model") {
      link_model = line + '\n';
    } else if (j.contains("epoch") && !j.contains("event") && j["epoch"].is_number_integer() &&
               j["epoch"].get<int>() <= last) {
      kept += link_model + line + '\n';
      link_model.clear();
    }
  }
  return kept;
}

bool stops_early_after(const CheckpointProgress& p, const RunOptions& opt) {
  return opt.patience > 0 && p.have_best && p.epoch < opt.epochs && p.epoch % opt.eval_every == 0 &&
         p.epoch - p.best_epoch >= opt.patience;
}

bool training_finished(const RunOptions& opt) {
  return opt.start.epoch >= opt.epochs || stops_early_after(opt.start, opt);
}

RunSummary train_epochs(Trainer& trainer, Communicator& comm, const RunOptions& opt) {
  const int world = comm.size();
  const bool root = comm.rank() == 0;
  const std::filesystem::path dir(opt.output_dir);
  AppendFile metrics;
  if (root) {
    metrics = opt.start.epoch > 0 ? reopen_metrics(dir / "metrics.jsonl", opt.start.epoch)
                                  : AppendFile((dir / "metrics.jsonl").string(), /*truncate=*/true);
  }
  // Rank 0 writes the checkpoints; with learned featureless rows every rank writes its own beside
  // them.
  if (opt.checkpoint_every > 0 && (root || trainer.has_embedding())) {
    std::error_code ec;
    std::filesystem::create_directories(opt.checkpoint_dir, ec);
    if (ec) {
      throw ConfigError(fmt::format("training.checkpoint_dir = {}: cannot create directory: {}",
                                    opt.checkpoint_dir, ec.message()));
    }
    // What a run killed while writing a checkpoint left (no rank writes one before epoch 1's
    // collectives, which wait for this).
    if (root) remove_stale_temporaries(opt.checkpoint_dir, "ckpt-");
  }
  // Checkpoints named for epochs after the one this run continues from: the resume passed over
  // them as unreadable.
  std::vector<int> skipped;
  if (root && opt.checkpoint_every > 0) {
    for (int e : list_checkpoints(opt.checkpoint_dir)) {
      if (e > opt.start.epoch) skipped.push_back(e);
    }
  }

  RunSummary summary;
  std::optional<ArrayFileWriter> final_checkpoint;  // rank 0's, written last
  summary.metric = trainer.metric_name();
  summary.world_size = world;
  summary.device = trainer.device().name();
  summary.cpu_isa = cpu_isa_name(cpu_isa());
  CheckpointProgress progress = opt.start;  // the last epoch run and the best validation score
  ModelSnapshot best = opt.start_best;      // restore_best: that epoch's parameters
  const auto kept_best = [&] { return opt.restore_best && best.epoch > 0 ? &best : nullptr; };
  std::string last_checkpoint =
      opt.start.epoch > 0 ? checkpoint_path(opt.checkpoint_dir, opt.start.epoch) : "";
  const int layers = trainer.num_layers();
  const size_t record_size = packed_record_size(layers);
  std::vector<double> mine(record_size), gathered(record_size * world);
  if (root && trainer.link_model() != nullptr) {
    metrics.write(link_model_json(*trainer.link_model()) + '\n');
  }
  log_parts(trainer, comm, summary);
  Totals totals;
  bool adaptive = false;
  MemoryMeter meter(trainer.device());
  MemoryPeak training_peak;
  const double training_start_s = steady_now_s();
  for (int epoch = opt.start.epoch + 1; epoch <= opt.epochs; ++epoch) {
    EpochRecord rec;
    rec.rank = comm.rank();
    meter.start();
    // The first epoch of a fresh run computes from the initial parameters; a resumed run's first,
    // from a checkpoint's, which earlier steps made.
    const bool first_epoch = opt.start.epoch == 0 && epoch == 1;
    rec.stats = train_one_epoch(trainer, epoch, first_epoch, last_checkpoint);
    check_divergence(trainer, rec.stats.loss, epoch, first_epoch, last_checkpoint);
    adaptive = rec.stats.adaptive;
    progress.epoch = epoch;
    if (epoch % opt.eval_every == 0 || epoch == opt.epochs) {
      rec.scores = trainer.evaluate();
      rec.evaluated = true;
      if (!progress.have_best || rec.scores.valid > progress.best_val) {
        progress.have_best = true;
        progress.best_val = rec.scores.valid;
        progress.test_at_best_val = rec.scores.test;
        progress.best_epoch = epoch;
        if (opt.restore_best) best = trainer.snapshot(epoch);
      }
      summary.final_test_acc = rec.scores.test;
    }
    // The scores are every rank's, so every rank stops after the same epoch.
    summary.stopped_early = stops_early_after(progress, opt);
    const bool last = summary.stopped_early || epoch == opt.epochs;
    const MemoryPeak epoch_peak = meter.peak();
    rec.stats.peak_rss_bytes = epoch_peak.rss_bytes;
    rec.stats.device_peak_bytes = epoch_peak.device_bytes;
    training_peak.rss_bytes = std::max(training_peak.rss_bytes, epoch_peak.rss_bytes);
    training_peak.host_tensor_bytes =
        std::max(training_peak.host_tensor_bytes, epoch_peak.host_tensor_bytes);
    training_peak.device_bytes = std::max(training_peak.device_bytes, epoch_peak.device_bytes);
    training_peak.device_used_bytes = epoch_peak.device_used_bytes;
    // Every rank's record of the epoch in one collective.
    pack_record(rec, layers, mine.data());
    comm.allgather(mine.data(), gathered.data(), record_size * sizeof(double));
    const bool checkpoint_due =
        opt.checkpoint_every > 0 && (epoch % opt.checkpoint_every == 0 || last);
    if (checkpoint_due) last_checkpoint = checkpoint_path(opt.checkpoint_dir, epoch);
    if (checkpoint_due && trainer.has_embedding()) {
      const EmbeddingOrigin origin{opt.checkpoint_header.dataset_fingerprint,
                                   opt.checkpoint_header.seed, epoch};
      trainer.save_embedding(embedding_path(last_checkpoint, comm.rank()), origin, kept_best());
      comm.barrier();  // every rank's rows are on disk before rank 0 writes the checkpoint
    }
    std::vector<EpochRecord> all;
    for (int r = 0; r < world; ++r) {
      all.push_back(unpack_record(gathered.data() + static_cast<size_t>(r) * record_size, layers));
    }
    totals.add(all);
    if (root) {
      std::string lines;
      for (const EpochRecord& r : all) lines += record_json(r) + '\n';
      metrics.write(lines);
      if (epoch % opt.progress_every == 0 || epoch == opt.start.epoch + 1 || last ||
          spdlog::should_log(spdlog::level::debug)) {
        log_progress(all, rec, opt);
      }
      // The last epoch's checkpoint goes to disk after the run's outputs: one that is there says
      // the run finished them (a run killed before is resumed from the checkpoint before).
      if (checkpoint_due && last)
        final_checkpoint = checkpoint_now(trainer, opt, progress, kept_best());
      if (checkpoint_due && !last)
        write_checkpoint(checkpoint_now(trainer, opt, progress, kept_best()), opt, epoch, skipped);
      if (summary.stopped_early) {
        spdlog::info(
            "stopping early after epoch {}: no better validation {} than epoch {}'s {:.4f} for {} "
            "epochs (training.patience {})",
            epoch, summary.metric, progress.best_epoch, progress.best_val,
            epoch - progress.best_epoch, opt.patience);
      }
    }
    if (summary.stopped_early) break;
  }
  summary.first_epoch = opt.start.epoch + 1;
  summary.epochs = progress.epoch;
  summary.best_val_acc = progress.best_val;
  summary.test_acc_at_best_val = progress.test_at_best_val;
  summary.best_epoch = progress.best_epoch;
  summary.params_epoch = progress.epoch;
  if (kept_best() != nullptr) {
    trainer.restore(best);
    summary.params_epoch = best.epoch;
  }
  release_host_blocks();  // no epoch follows to take the blocks kept for reuse
  summarize(totals, adaptive, summary);
  static_assert(std::is_trivially_copyable<PhasePeaks>::value, "PhasePeaks is sent as bytes");
  PhasePeaks mine_memory = opt.memory;
  mine_memory[static_cast<int>(Phase::kTraining)] = training_peak;
  summary.memory.resize(static_cast<size_t>(world));
  comm.allgather(&mine_memory, summary.memory.data(), sizeof(PhasePeaks));
  double resets = opt.memory_resets && meter.resets() ? 0.0 : 1.0;
  comm.allreduce_max(&resets, 1);
  summary.memory_resets = resets == 0.0;
  PhaseSeconds mine_seconds = opt.seconds;
  mine_seconds[static_cast<int>(Phase::kTraining)] = steady_now_s() - training_start_s;
  summary.seconds.resize(static_cast<size_t>(world));
  comm.allgather(&mine_seconds, summary.seconds.data(), sizeof(PhaseSeconds));
  // Rank 0 writes the run's outputs alone from here on (params.bin, the predictions once gathered,
  // the summary record, its checkpoint): the others wait for it as long as it shows signs of life,
  // not communication.timeout_s, which bounds their MPI_Finalize (a disk slower than the timeout
  // ended a healthy job there); only the predictions' gather waits for params.bin under the
  // timeout. The summary last: a run whose params.bin or predictions could not be written (a full
  // disk) has none.
  SoloWork solo(comm, 0, "writing the run's outputs");
  if (root) write_params(dir, trainer);
  if (opt.write_outputs) opt.write_outputs();
  if (root) metrics.write(summary_json(summary) + '\n');
  if (final_checkpoint) write_checkpoint(*final_checkpoint, opt, progress.epoch, skipped);
  solo.finish();
  return summary;
}

}  // namespace adaqp
