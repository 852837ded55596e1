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
  enum class Kind { kNll, kCrossEntropy };

  Loss(Kind kind, Reduction reduction = Reduction::kMean, double label_smoothing = 0.0);
  // Checks shapes and class range first, so a mistake reads as what it is, not as a CPU assert.
  torch::Tensor operator()(const torch::Tensor& output, const torch::Tensor& target) const;
  std::string name() const;

 private:
  Kind kind_;
  Reduction reduction_;
  double label_smoothing_;
};

}  // namespace engine::nn
