// The trainer's side of data-parallel training over a distributed::Group: the model's parameters
// and buffers made rank 0's at the start, gradients averaged by distributed::GradientSync (c10d's
// Reducer), metrics summed over the ranks before they are logged, and the decisions every rank
// must take together (stop, interrupt) agreed on.
#pragma once

#include <torch/types.h>

#include <memory>
#include <vector>

#include "engine/distributed/gradient_sync.hpp"
#include "engine/distributed/group.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/spec.hpp"

namespace engine::train {

class DataParallel {
 public:
  // Replaces the spec's pipelines by this rank's shares (data::Pipeline::training_share and
  // evaluation_share): the script's :batch(n) is the global batch. Connects the model's
  // nn.SyncBatchNorm layers (every BatchNorm under sync_batchnorm) to the group, until the
  // end of the run.
  DataParallel(distributed::Group& group, TrainSpec& spec);
  ~DataParallel();

  distributed::Group& group() { return group_; }
  int rank() const { return group_.rank(); }
  int size() const { return group_.size(); }
  bool leader() const { return group_.leader(); }

  // Every rank's parameters and buffers set to rank 0's (after a fresh start or a resume).
  void broadcast_model();
  void before_forward();
  // loss.backward(); when `synchronise`, the gradients are all-reduced as they come (the last
  // batch of an accumulation group). A failed all-reduce comes out as a DistributedError.
  void backward(const torch::Tensor& loss, bool synchronise);
  // A backward that adds nothing to this rank's gradients but takes part in the all-reduce:
  // what a rank does with a batch it skips (a NaN loss) while the others step.
  void backward_nothing();
  // The accumulator's sums, sample counts and class counts summed over the ranks, in place.
  // Every rank must have measured the same metric names.
  void reduce(MetricAccumulator& metrics);
  // Element-wise maximum over the ranks.
  std::vector<double> maximum(const std::vector<double>& values);
  std::vector<double> sum(const std::vector<double>& values);
  void barrier();
  // Whether some BatchNorm's statistics are summed over the ranks: its backward is then a
  // collective too, so a batch is skipped by all ranks or by none.
  bool synchronised_batchnorm() const { return !synchronised_.empty(); }

 private:
  distributed::Group& group_;
  TrainSpec& spec_;
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<distributed::GradientSync> sync_;
  std::vector<std::shared_ptr<nn::BatchNormImpl>> synchronised_;
};

}  // namespace engine::train
