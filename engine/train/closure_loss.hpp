// What an optimizer's step does first when given a closure (LBFGS-style): evaluate the loss
// with autograd on, while the step itself runs without. Shared by the engine's optimizers.
#pragma once

#include <torch/optim/optimizer.h>

namespace engine::train {

// The closure's loss; an undefined tensor without a closure.
inline torch::Tensor closure_loss(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  torch::AutoGradMode enable_grad(true);
  return closure();
}

}  // namespace engine::train
