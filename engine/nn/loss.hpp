// Loss functions the trainer and scripts share. Class targets are 0-based here, as in libtorch;
// the Lua bindings convert from Lua's 1-based classes at the boundary.
#pragma once

#include <torch/types.h>

#include <string>

namespace engine::nn {

enum class Reduction { kMean, kSum, kNone };
Reduction parse_reduction(const std::string& name);

class Loss {
 public:
  // Class losses (NLL, cross-entropy) take class-index targets; the others take targets of the
  // output's shape.
  enum class Kind { kNll, kCrossEntropy, kMse, kL1, kSmoothL1, kBceWithLogits };

  // `parameter` is label_smoothing for cross-entropy and beta for smooth L1 (default 1);
  // `pos_weight` (BCE with logits) may be undefined.
  Loss(Kind kind, Reduction reduction = Reduction::kMean, double parameter = -1.0,
       torch::Tensor pos_weight = {});
  // Checks shapes and class range first, so a mistake reads as what it is, not as a CPU assert.
  torch::Tensor operator()(const torch::Tensor& output, const torch::Tensor& target) const;
  std::string name() const;
  bool takes_class_targets() const { return kind_ == Kind::kNll || kind_ == Kind::kCrossEntropy; }

 private:
  Kind kind_;
  Reduction reduction_;
  double label_smoothing_ = 0.0;
  double beta_ = 1.0;
  torch::Tensor pos_weight_;
};

}  // namespace engine::nn
