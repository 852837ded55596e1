// Metrics named in scripts ("accuracy", "top5", "f1", "mse", ...) and metrics the script
// computes itself, accumulated so that averages over a logging window or a whole split weight
// every sample equally. Precision, recall and F1 are macro averages over the classes seen,
// computed from confusion counts summed over the window, not averages of per-batch values.
#pragma once

#include <torch/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/core/metric_names.hpp"

namespace engine::train {

// Fraction of samples whose highest score is the target class (targets 0-based).
double accuracy(const torch::Tensor& output, const torch::Tensor& target);
// Fraction of samples whose target is among the k highest scores.
double topk_accuracy(const torch::Tensor& output, const torch::Tensor& target, int64_t k);
// The same samples counted, as an int64 scalar on the output's device (nothing read back).
torch::Tensor correct_count(const torch::Tensor& output, const torch::Tensor& target);
torch::Tensor topk_correct_count(const torch::Tensor& output, const torch::Tensor& target,
                                 int64_t k);

// Throws UsageError for an unknown name, listing the known ones.
void check_metric_name(const std::string& name);
// Whether a larger value is better: accuracy, top-k, precision, recall, F1; not loss, MSE, MAE.
using core::larger_is_better;

// A metric the script defines: its value on one batch, averaged over samples like the others.
struct CustomMetric {
  std::string name;
  std::function<double(const torch::Tensor& output, const torch::Tensor& target)> compute;
};

// One batch's contribution: per-sample averages, and per-class counts (3 x C: true positives,
// false positives, false negatives) when precision, recall or F1 are asked for.
struct BatchMetrics {
  std::map<std::string, double> means;
  torch::Tensor counts;
  int64_t samples = 0;
};

// One batch's metrics with the values still on the device: each read later as the scalar
// `value` (a loss, a count of correct samples, a mean error) divided by `divisor`. A GPU that
// is never waited for between log steps runs ahead of the host (docs/gpu.md).
struct DeviceValue {
  std::string name;
  torch::Tensor value;
  double divisor = 1;
};
struct PendingBatch {
  BatchMetrics known;  // values already on the host: a script's, custom metrics, class counts
  std::vector<DeviceValue> device;
  int64_t step = 0, epoch = 0, batch = 0;  // where it was trained (1-based), for messages
};

// Reads every device value of `pending` in one copy; the batches' metrics, in order, equal to
// what measure() would have given for each (the same values, the same divisions).
// `also`: device scalars read in the same copy, their values into *also_read in that order.
std::vector<BatchMetrics> read_pending(const std::vector<PendingBatch>& pending,
                                       const std::vector<torch::Tensor>& also = {},
                                       std::vector<double>* also_read = nullptr);

class MetricAccumulator {
 public:
  explicit MetricAccumulator(std::vector<std::string> metrics = {},
                             std::vector<CustomMetric> custom = {});
  // The loss (a mean over the batch) and the named metrics of one batch.
  BatchMetrics evaluate(double loss, const torch::Tensor& output,
                        const torch::Tensor& target) const;
  // One batch of `samples` samples as the trainer and the evaluator count it: the named metrics
  // of its output (none when there is no output), then `values` (the loss, a hook's values,
  // what ctx:log gave), which win over metrics of the same name.
  BatchMetrics measure(const std::map<std::string, double>& values, const torch::Tensor& output,
                       const torch::Tensor& target, int64_t samples) const;
  // measure() without reading the device: `loss` (undefined: none) and the named metrics stay
  // tensors until read_pending. Custom metrics (Lua functions) and precision, recall and F1's
  // class counts are read at once.
  PendingBatch measure_pending(const torch::Tensor& loss,
                               const std::map<std::string, double>& values,
                               const torch::Tensor& output, const torch::Tensor& target,
                               int64_t samples) const;
  void add(const BatchMetrics& batch);
  // Adds a batch of `samples` samples whose per-sample averages are `values`.
  void add(const std::map<std::string, double>& values, int64_t samples);
  // evaluate + add in one call.
  void add(double loss, const torch::Tensor& output, const torch::Tensor& target);
  int64_t samples() const { return samples_; }
  // Averages per sample, keyed "loss", "accuracy", "top5", "f1"...; empty when nothing was added.
  std::map<std::string, double> averages() const;
  // One average; 0 when nothing was added.
  double average(const std::string& name) const;
  void reset();

  // What a checkpoint keeps of a window in progress: sums, sample count, class counts.
  std::map<std::string, double> sums() const { return sums_; }
  torch::Tensor counts() const { return counts_; }
  void restore(std::map<std::string, double> sums, int64_t samples, torch::Tensor counts);

 private:
  std::vector<std::string> metrics_;
  std::vector<CustomMetric> custom_;
  bool class_counts_ = false;  // precision, recall or f1 asked for
  std::map<std::string, double> sums_;
  torch::Tensor counts_;  // 3 x C float64, summed
  int64_t samples_ = 0;
};

}  // namespace engine::train
