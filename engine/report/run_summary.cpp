#include "engine/report/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/metric_names.hpp"

namespace engine::report {
namespace {

// Splits in the order a reader looks for them.
int split_rank(const std::string& split) {
  if (split == "validation") return 0;
  if (split == "train") return 1;
  if (split == "test") return 2;
  if (split == "data") return 4;
  return 3;
}

}  // namespace

Better better_of(const std::string& split, const std::string& metric) {
  if (metric == "lr" || metric == "loss_scale" || metric == "skipped_records" ||
      metric == "nan_skipped_batches" || metric == "overflow_skipped_steps" ||
      metric == "peak_resident_bytes") {
    return Better::kNeither;
  }
  if (metric == "samples_per_second") return Better::kLarger;
  if (split == "data")
    return metric == "loader_wait_fraction" ? Better::kSmaller : Better::kNeither;
  return core::larger_is_better(metric) ? Better::kLarger : Better::kSmaller;
}

std::vector<SeriesSummary> summarize_series(const io::RunFile& run) {
  std::vector<std::string> splits;
  for (const auto& [split, _] : run.metrics) splits.push_back(split);
  std::stable_sort(splits.begin(), splits.end(), [](const std::string& a, const std::string& b) {
    return split_rank(a) < split_rank(b);
  });
  std::vector<SeriesSummary> out;
  for (const auto& split : splits) {
    const auto& rows = run.metrics.at(split);
    for (const auto& [metric, values] : rows.series) {
      SeriesSummary s;
      s.split = split;
      s.metric = metric;
      s.better = better_of(split, metric);
      s.values = values;
      s.rows = values.size();
      s.last = s.best = std::numeric_limits<double>::quiet_NaN();
      for (size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!std::isfinite(v)) continue;
        s.last = v;
        s.last_step = rows.step[i];
        const bool better = std::isnan(s.best) || (s.better == Better::kLarger && v > s.best) ||
                            (s.better == Better::kSmaller && v < s.best);
        if (s.better != Better::kNeither && better) {
          s.best = v;
          s.best_step = rows.step[i];
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

int64_t steps_of(const io::RunFile& run) {
  int64_t steps = 0;
  for (const auto& [_, split] : run.metrics) {
    if (!split.step.empty()) steps = std::max(steps, split.step.back());
  }
  return steps;
}

double seconds_of(const io::RunFile& run) {
  double seconds = 0;
  for (const auto& [_, split] : run.metrics) {
    for (double t : split.time) {
      if (std::isfinite(t)) seconds = std::max(seconds, t);
    }
  }
  return seconds;
}

}  // namespace engine::report
