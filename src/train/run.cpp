#include "adaqp/train/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "adaqp/common/error.h"

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
  double comm_time_s = 0;
  double reduce_time_s = 0;
  int64_t bytes_sent = 0;
  double train = 0, valid = 0, test = 0;
};
static_assert(std::is_trivially_copyable<EpochRecord>::value, "EpochRecord is sent as bytes");

// A JSON number; non-finite values (a diverged loss) become null.
std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "null";
}

std::string record_json(const EpochRecord& r) {
  std::string s = fmt::format(
      "{{\"epoch\":{},\"rank\":{},\"loss\":{},\"epoch_time_s\":{},\"compute_time_s\":{},"
      "\"comm_time_s\":{},\"reduce_time_s\":{},\"bytes_sent\":{}",
      r.epoch, r.rank, json_number(r.loss), json_number(r.epoch_time_s),
      json_number(r.compute_time_s), json_number(r.comm_time_s), json_number(r.reduce_time_s),
      r.bytes_sent);
  if (r.evaluated) {
    s += fmt::format(",\"train_acc\":{},\"val_acc\":{},\"test_acc\":{}", json_number(r.train),
                     json_number(r.valid), json_number(r.test));
  }
  return s + "}";
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

}  // namespace

RunSummary run_training(Trainer& trainer, Communicator& comm, const RunOptions& opt) {
  const int world = comm.size();
  const bool root = comm.rank() == 0;
  const std::filesystem::path dir(opt.output_dir);
  std::ofstream metrics;
  if (root) metrics = open_output(dir / "metrics.jsonl");

  RunSummary summary;
  summary.metric = trainer.metric_name();
  summary.epochs = opt.epochs;
  summary.world_size = world;
  double total_time = 0;
  bool have_best = false;
  std::vector<EpochRecord> all(static_cast<size_t>(world));
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    const EpochStats st = trainer.train_epoch(epoch);
    EpochRecord rec;
    rec.epoch = epoch;
    rec.rank = comm.rank();
    rec.loss = st.loss;
    rec.epoch_time_s = st.epoch_time_s;
    rec.compute_time_s = st.compute_time_s;
    rec.comm_time_s = st.comm_time_s;
    rec.reduce_time_s = st.reduce_time_s;
    rec.bytes_sent = st.bytes_sent;
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

    double slowest = 0, slowest_comm = 0;
    int64_t bytes = 0;
    for (const EpochRecord& r : all) {
      slowest = std::max(slowest, r.epoch_time_s);
      slowest_comm = std::max(slowest_comm, r.comm_time_s);
      bytes += r.bytes_sent;
    }
    total_time += slowest;
    if (!root) continue;
    for (const EpochRecord& r : all) metrics << record_json(r) << '\n';
    metrics.flush();
    const std::string scores = rec.evaluated ? fmt::format(" | train {:.4f} val {:.4f} test {:.4f}",
                                                           rec.train, rec.valid, rec.test)
                                             : "";
    spdlog::info("epoch {:4d} | loss {:.4f}{} | {:.4f} s (comm {:.4f} s) | {:.2f} MB sent", epoch,
                 rec.loss, scores, slowest, slowest_comm, static_cast<double>(bytes) / 1e6);
  }
  if (opt.epochs > 0) {
    summary.mean_epoch_time_s = total_time / opt.epochs;
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
