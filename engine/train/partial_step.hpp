// An optimizer's own step on some of its parameters only: what the engine's optimizers do with
// the parameters their faster paths do not take (sparse gradients, other types or devices).
#pragma once

#include <torch/optim/optimizer.h>

#include <functional>
#include <vector>

namespace engine::train {

// Runs `step` with the gradient of every parameter of `groups` that is not in `only` hidden
// (undefined), so that the step leaves those alone; gives them back afterwards, also when the
// step throws. Does nothing when `only` is empty.
void step_only(std::vector<torch::optim::OptimizerParamGroup>& groups,
               const std::vector<torch::Tensor>& only, const std::function<void()>& step);

}  // namespace engine::train
