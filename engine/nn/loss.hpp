// Loss functions the trainer and scripts share. Class targets are 0-based here, as in libtorch;
// targets from a script come through of_script_targets, which converts Lua's 1-based classes
// and checks their range where they enter. The trainer checks its data's classes where they
// enter too (train/target_check.hpp), so a loss call reads no target values to check them.
#pragma once

#include <optional>
#include <utility>

#include <torch/types.h>

#include <string>

namespace engine::nn {

// kBatchMean: the sum over the batch's size (KL divergence's 'batchmean', its mathematically right
// mean); the other losses refuse it.
enum class Reduction { kMean, kSum, kNone, kBatchMean };
Reduction parse_reduction(const std::string& name);

class Loss {
 public:
  // Class losses (NLL, cross-entropy) take class-index targets; the others take targets of the
  // output's shape.
  enum class Kind {
    kNll,
    kCrossEntropy,
    kMse,
    kL1,
    kSmoothL1,
    kBceWithLogits,
    kBce,
    kKlDiv,
    kHuber
  };

  // `parameter` is label_smoothing for cross-entropy, beta for smooth L1 (default 1), delta for
  // Huber (default 1), and log_target (0 or 1) for KL divergence; `weight` is pos_weight for BCE
  // with logits and the elements' weight for BCE, and may be undefined.
  Loss(Kind kind, Reduction reduction = Reduction::kMean, double parameter = -1.0,
       torch::Tensor weight = {});
  // Checks shapes and dtypes first, so a mistake reads as what it is, not as a CPU assert; class
  // targets must be in range already (check_targets).
  torch::Tensor operator()(const torch::Tensor& output, const torch::Tensor& target) const;
  // Shapes, dtypes and, for class losses, that every target is a class of the output (0-based):
  // ScriptError naming the class in Lua's terms ("class 4 is out of range 1..3").
  // `range`: the target's smallest and largest class when they were read on the host already
  // (data::Batch::target_range): nothing is read back from a device then.
  void check_targets(const torch::Tensor& output, const torch::Tensor& target,
                     std::optional<std::pair<int64_t, int64_t>> range = std::nullopt) const;
  // The loss of targets a script handed over: 1-based classes converted and checked.
  torch::Tensor of_script_targets(const torch::Tensor& output, const torch::Tensor& target) const;
  // Classes per sample in an output of a class loss: N x C (x ...) -> C, or C for one sample.
  static int64_t class_count(const torch::Tensor& output);
  std::string name() const;
  bool takes_class_targets() const { return kind_ == Kind::kNll || kind_ == Kind::kCrossEntropy; }

 private:
  Kind kind_;
  Reduction reduction_;
  double label_smoothing_ = 0.0;
  double beta_ = 1.0;  // smooth L1's beta, Huber's delta
  bool log_target_ = false;
  torch::Tensor weight_;
};

}  // namespace engine::nn
