// Where a pipeline's class targets meet the model: checked against the model's outputs as the
// data enters the loss. A source that vouches for its classes (data::Source::class_count, checked
// as it was loaded) is compared with the first batch's output once; any other source's targets
// are read and checked batch by batch. Losses that take no classes need only their shapes.
#pragma once

#include <optional>

#include "engine/data/pipeline.hpp"
#include "engine/nn/loss.hpp"

namespace engine::train {

class TargetCheck {
 public:
  explicit TargetCheck(const data::Pipeline& pipeline);
  // Before loss(output, target); ScriptError naming the data and the classes when they do not fit.
  // `range`: the batch's classes read on the host before its copy (data::Batch::target_range).
  void operator()(const nn::Loss& loss, const torch::Tensor& output, const torch::Tensor& target,
                  std::optional<std::pair<int64_t, int64_t>> range = std::nullopt);
  // Whether every batch's targets are read: a DevicePrefetcher then reads their range on the host.
  bool reads_every_batch() const { return !classes_; }

 private:
  std::optional<int64_t> classes_;
  std::string data_;
  bool done_ = false;
};

}  // namespace engine::train
