// What writing a run file costs the training loop: the time of RunWriter::append_metrics per
// row, with the default flush policy (rows wait, flushed every 2 s or 1000 rows) and with a
// flush after every row (the writer before issue 18), for a training row of the trainer's
// usual metrics. Compare with a step's time (engine bench --model mlp): with log_every 1 every
// step writes a row, so this is the worst case. docs/performance.md has the figures.
//   perf_run_writer [ROWS] [FOLDER]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/io/run_writer.hpp"

namespace {

struct Cost {
  double mean_us, p50_us, max_us;
};

Cost write_rows(const std::string& folder, int64_t rows, const engine::io::FlushPolicy& policy) {
  const auto path = engine::io::RunWriter::new_run_path(folder, "perf");
  engine::io::RunWriter writer(path, engine::io::RunInfo{});
  writer.set_flush_policy(policy);
  std::vector<double> us;
  us.reserve(static_cast<size_t>(rows));
  for (int64_t step = 1; step <= rows; ++step) {
    const double x = 1.0 / static_cast<double>(step);
    const std::map<std::string, double> values = {
        {"loss", x}, {"accuracy", 1 - x}, {"lr", 0.01}, {"samples_per_second", 50000 * x}};
    const auto start = std::chrono::steady_clock::now();
    writer.append_metrics("train", step, static_cast<double>(step) / 1000, step * 1e-3, values);
    writer.flush_if_due();  // what the trainer's progress callback does every step
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  writer.finish(engine::core::FileStatus::kCompleted);
  double total = 0;
  for (double u : us) total += u;
  const double max = *std::max_element(us.begin(), us.end());
  std::nth_element(us.begin(), us.begin() + static_cast<long>(us.size() / 2), us.end());
  return {total / static_cast<double>(us.size()), us[us.size() / 2], max};
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 20000;
  const std::string folder = argc > 2 ? argv[2] : "/tmp/perf_run_writer";
  std::filesystem::remove_all(folder);
  std::printf("%-28s %10s %10s %10s\n", "policy", "mean_us", "p50_us", "max_us");
  for (int round = 0; round < 3; ++round) {
    const Cost waiting = write_rows(folder, rows, engine::io::FlushPolicy{});
    const Cost each = write_rows(folder, rows, engine::io::FlushPolicy{1, 0});
    std::printf("%-28s %10.2f %10.2f %10.1f\n", "default (2 s / 1000 rows)", waiting.mean_us,
                waiting.p50_us, waiting.max_us);
    std::printf("%-28s %10.2f %10.2f %10.1f\n", "flush every row", each.mean_us, each.p50_us,
                each.max_us);
  }
  std::filesystem::remove_all(folder);
  return 0;
}
