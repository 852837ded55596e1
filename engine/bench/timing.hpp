// Timing batches the way a benchmark must: warm-up batches run and discarded, every timed batch
// measured on a monotonic clock, the device synchronised before each reading, and the
// statistics users compare (DLBS's mean-based throughput, and the p50 one).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace engine::bench {

// Seconds from some fixed point; steady_clock unless a test passes its own.
using Clock = std::function<double()>;
double steady_seconds();

// Waits for the work queued on the device (CUDA) so that a reading covers it; nothing on CPU.
void synchronize(const torch::Device& device);

// Runs `batch` warmup times untimed, then `timed` times, each between two readings of the
// clock taken after synchronising the device; returns the timed batches' milliseconds.
std::vector<double> time_batches(const std::function<void()>& batch, int64_t warmup, int64_t timed,
                                 const torch::Device& device, const Clock& clock = steady_seconds);

// Runs `batch` n times with no synchronisation between them, the device synchronised before
// the first and after the last: the mean milliseconds a batch takes while the device's queue
// stays full, as in a training loop that reads nothing back (PyTorch's pipelined loop).
double time_pipelined(const std::function<void()>& batch, int64_t n, const torch::Device& device,
                      const Clock& clock = steady_seconds);

// Times the parts of each batch (data, forward, backward, optimizer): start() as a batch
// begins, end(part) as each part ends, the device synchronised before each reading. While
// disabled (as made) both do nothing, so that warm-up batches are not recorded.
class PartTimer {
 public:
  explicit PartTimer(torch::Device device, Clock clock = steady_seconds);
  void enable(bool on) { enabled_ = on; }
  void start();
  void end(const std::string& part);
  // Each part's milliseconds, one per recorded batch.
  const std::map<std::string, std::vector<double>>& ms() const { return ms_; }

 private:
  torch::Device device_;
  Clock clock_;
  bool enabled_ = false;
  double last_ = 0;
  std::map<std::string, std::vector<double>> ms_;
};

inline constexpr int64_t kBatchesForP90 = 10;
inline constexpr int64_t kBatchesForP99 = 100;

struct Summary {
  int64_t batches = 0;
  double mean_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0;
  // nearest-rank percentiles; p90 needs kBatchesForP90 batches and p99 kBatchesForP99, else NaN
  // (with 3 batches the "p99" is the slowest batch)
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double throughput = 0;      // samples/s from the mean, as DLBS reports it
  double throughput_p50 = 0;  // samples/s from the median
};

// Statistics of batch times for batches of batch_size samples; an empty list gives zeros.
Summary summarize(std::vector<double> batch_ms, int64_t batch_size);

}  // namespace engine::bench
