// Classification metrics named in scripts ("accuracy", "top5", ...), accumulated as sums so
// that averages over a logging window or a whole split weight every sample equally.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

namespace engine::train {

// Fraction of samples whose highest score is the target class (targets 0-based).
double accuracy(const torch::Tensor& output, const torch::Tensor& target);
// Fraction of samples whose target is among the k highest scores.
double topk_accuracy(const torch::Tensor& output, const torch::Tensor& target, int64_t k);

// Throws UsageError for an unknown name, listing the known ones.
void check_metric_name(const std::string& name);

class MetricAccumulator {
 public:
  explicit MetricAccumulator(std::vector<std::string> metrics = {});
  // One batch's values: the loss (a mean over the batch) and the named metrics.
  std::map<std::string, double> evaluate(double loss, const torch::Tensor& output,
                                         const torch::Tensor& target) const;
  // Adds a batch of `samples` samples whose per-sample averages are `values`.
  void add(const std::map<std::string, double>& values, int64_t samples);
  // evaluate + add in one call.
  void add(double loss, const torch::Tensor& output, const torch::Tensor& target);
  int64_t samples() const { return samples_; }
  // Averages per sample, keyed "loss", "accuracy", "top5"...; empty when nothing was added.
  std::map<std::string, double> averages() const;
  // One average; 0 when nothing was added.
  double average(const std::string& name) const;
  void reset();

 private:
  std::vector<std::string> metrics_;
  std::map<std::string, double> sums_;
  int64_t samples_ = 0;
};

}  // namespace engine::train
