#include "engine/bench/repeats.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/bench/sweep_runner.hpp"
#include "engine/bench/timing.hpp"
#include "engine/core/format.hpp"

namespace engine::bench {

void Repeats::take(const io::BenchPoint& one, double p50_ms) {
  const auto repeat = static_cast<int64_t>(p50s_.size());
  if (p50s_.empty()) {
    merged_ = one;
    merged_.batch_ms.clear();
    merged_.batch_repeat.clear();
    merged_.part_ms.clear();
    merged_.resources.clear();
  }
  p50s_.push_back(p50_ms);
  if (std::isfinite(one.row.pipelined_ms)) pipelined_ms_.push_back(one.row.pipelined_ms);
  merged_.batch_ms.insert(merged_.batch_ms.end(), one.batch_ms.begin(), one.batch_ms.end());
  merged_.batch_repeat.insert(merged_.batch_repeat.end(), one.batch_ms.size(), repeat);
  for (const auto& [part, ms] : one.part_ms) {
    auto& into = merged_.part_ms[part];
    into.insert(into.end(), ms.begin(), ms.end());
  }
  for (const auto& [series, values] : one.resources) {
    auto& into = merged_.resources[series];
    into.insert(into.end(), values.begin(), values.end());
  }
  auto& row = merged_.row;
  if (repeat > 0 && !std::isnan(one.row.cpu_share)) {  // the least a repeat got
    row.cpu_share =
        std::isnan(row.cpu_share) ? one.row.cpu_share : std::min(row.cpu_share, one.row.cpu_share);
    row.starved = row.starved || one.row.starved;
  }
  row.peak_resident_bytes = std::max(row.peak_resident_bytes, one.row.peak_resident_bytes);
  row.peak_device_bytes = std::max(row.peak_device_bytes, one.row.peak_device_bytes);
}

void Repeats::add(const io::BenchPoint& one) {
  take(one, one.row.p50_ms);
}

void Repeats::add_stored(const io::BenchPoint& stored) {
  // a file written before batch_repeat was recorded holds one repeat
  const auto& of = stored.batch_repeat.size() == stored.batch_ms.size()
                       ? stored.batch_repeat
                       : std::vector<int64_t>(stored.batch_ms.size(), 0);
  const int64_t repeats = of.empty() ? 0 : *std::max_element(of.begin(), of.end()) + 1;
  for (int64_t r = 0; r < repeats; ++r) {
    io::BenchPoint one;
    one.row = stored.row;
    one.details = stored.details;
    one.parameters = stored.parameters;
    if (r == 0) one.resources = stored.resources;  // the stored repeats' samples, kept whole
    for (size_t i = 0; i < of.size(); ++i) {
      if (of[i] != r) continue;
      one.batch_ms.push_back(stored.batch_ms[i]);
      for (const auto& [part, ms] : stored.part_ms) {
        if (ms.size() == of.size()) one.part_ms[part].push_back(ms[i]);
      }
    }
    take(one, summarize(one.batch_ms, stored.row.batch_size).p50_ms);
  }
}

io::BenchPoint Repeats::merged() const {
  io::BenchPoint point = merged_;
  auto& row = point.row;
  record_summary(row, summarize(point.batch_ms, row.batch_size));
  record_parts(row, point.part_ms);
  if (!pipelined_ms_.empty()) {  // the repeats' mean
    double sum = 0;
    for (double ms : pipelined_ms_) sum += ms;
    record_pipelined(row, sum / static_cast<double>(pipelined_ms_.size()));
  }
  row.repeats = count();
  point.details.erase("repeat_p50_ms");
  if (count() > 1) {
    std::vector<double> sorted = p50s_;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    row.p50_spread = median > 0 ? (sorted.back() - sorted.front()) / median : 0;
    row.unstable = row.p50_spread > unstable_spread_;
    std::string list;
    for (double v : p50s_) list += (list.empty() ? "" : ", ") + core::number_string(v);
    point.details["repeat_p50_ms"] = list;
  }
  return point;
}

}  // namespace engine::bench
