// Batch normalisation owned by the engine rather than libtorch's BatchNorm modules, so that
// its training statistics can be those of a whole data-parallel batch: PyTorch's BatchNorm1d,
// 2d and 3d (same parameters, buffers, defaults and results) and SyncBatchNorm, which takes
// any input of two or more dimensions. The trainer connects a layer to its process group
// (every nn.SyncBatchNorm, and every BatchNorm under `sync_batchnorm = true`); until then, and
// in evaluation, each process normalises with its own statistics.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/options/batchnorm.h>

#include <functional>
#include <memory>
#include <ostream>

namespace engine::nn {

// The processes whose statistics a synchronised layer sums: this one's rank, how many there
// are, and an in-place element-wise sum over all of them (a collective: every process calls it
// in the same order).
struct ProcessSum {
  int rank = 0;
  int size = 1;
  std::function<void(torch::Tensor&)> sum;
};

enum class BatchNormKind { k1d, k2d, k3d, kSync };

class BatchNormImpl : public torch::nn::Cloneable<BatchNormImpl> {
 public:
  BatchNormImpl(BatchNormKind kind, const torch::nn::BatchNormOptions& options);

  void reset() override;
  torch::Tensor forward(const torch::Tensor& input);
  // "BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)"
  void pretty_print(std::ostream& stream) const override;

  // From now on, statistics in training are summed over `processes` (one process: no change),
  // until disconnect().
  void synchronise(ProcessSum processes);
  void disconnect() { processes_.reset(); }
  BatchNormKind kind() const { return kind_; }

  torch::nn::BatchNormOptions options;
  torch::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  void check_input(const torch::Tensor& input) const;
  // The running average's factor for this forward (PyTorch's `exponential_average_factor`),
  // counting the batch when it is tracked.
  double next_average_factor();
  torch::Tensor synchronised_forward(const torch::Tensor& input, double average_factor);

  BatchNormKind kind_;
  std::shared_ptr<const ProcessSum> processes_;
};

TORCH_MODULE(BatchNorm);

}  // namespace engine::nn
