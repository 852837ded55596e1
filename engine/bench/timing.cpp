#include "engine/bench/timing.hpp"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace engine::bench {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index() < 0 ? -1 : device.index());
}

std::vector<double> time_batches(const std::function<void()>& batch, int64_t warmup, int64_t timed,
                                 const torch::Device& device, const Clock& clock) {
  for (int64_t i = 0; i < warmup; ++i) batch();
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(std::max<int64_t>(timed, 0)));
  synchronize(device);
  for (int64_t i = 0; i < timed; ++i) {
    const double start = clock();
    batch();
    synchronize(device);
    ms.push_back((clock() - start) * 1000.0);
  }
  return ms;
}

double time_pipelined(const std::function<void()>& batch, int64_t n, const torch::Device& device,
                      const Clock& clock) {
  if (n <= 0) return std::numeric_limits<double>::quiet_NaN();
  synchronize(device);
  const double start = clock();
  for (int64_t i = 0; i < n; ++i) batch();
  synchronize(device);
  return (clock() - start) * 1000.0 / static_cast<double>(n);
}

PartTimer::PartTimer(torch::Device device, Clock clock)
    : device_(device), clock_(std::move(clock)) {}

void PartTimer::start() {
  if (!enabled_) return;
  synchronize(device_);
  last_ = clock_();
}

void PartTimer::end(const std::string& part) {
  if (!enabled_) return;
  synchronize(device_);
  const double now = clock_();
  ms_[part].push_back((now - last_) * 1000.0);
  last_ = now;
}

namespace {

// The nearest-rank percentile of sorted values: the smallest value with at least q of the
// values at or below it.
double percentile(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(q * n)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

constexpr double kNotBacked = std::numeric_limits<double>::quiet_NaN();

}  // namespace

Summary summarize(std::vector<double> batch_ms, int64_t batch_size) {
  Summary s;
  if (batch_ms.empty()) return s;
  std::sort(batch_ms.begin(), batch_ms.end());
  const auto n = static_cast<double>(batch_ms.size());
  s.batches = static_cast<int64_t>(batch_ms.size());
  s.mean_ms = std::accumulate(batch_ms.begin(), batch_ms.end(), 0.0) / n;
  double squares = 0;
  for (double v : batch_ms) squares += (v - s.mean_ms) * (v - s.mean_ms);
  s.std_ms = batch_ms.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.min_ms = batch_ms.front();
  s.max_ms = batch_ms.back();
  s.p50_ms = percentile(batch_ms, 0.50);
  // a percentile with too few batches behind it is only the maximum under another name
  s.p90_ms = s.batches >= kBatchesForP90 ? percentile(batch_ms, 0.90) : kNotBacked;
  s.p99_ms = s.batches >= kBatchesForP99 ? percentile(batch_ms, 0.99) : kNotBacked;
  const auto samples = static_cast<double>(batch_size);
  s.throughput = s.mean_ms > 0 ? samples * 1000.0 / s.mean_ms : 0;
  s.throughput_p50 = s.p50_ms > 0 ? samples * 1000.0 / s.p50_ms : 0;
  return s;
}

}  // namespace engine::bench
