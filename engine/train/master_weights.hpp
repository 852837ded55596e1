// DLBS's float16 (its PyTorch backend's network_to_half with an FP16 optimizer, Apex's O2): the
// model itself in float16, BatchNorm kept in float32, and the optimizer stepping float32 master
// copies of the weights. engine bench --dtype float16_master; --dtype float16 is autocast with
// the loss scaler instead, as PyTorch's AMP recipe (and engine train's precision = 'float16').
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <utility>
#include <vector>

namespace engine::train {

// The module's floating parameters and buffers converted to `dtype` in place (their tensors
// keep their identity), those of BatchNorm layers left as they are; returns the parameters it
// converted with float32 copies of their values taken before.
std::vector<std::pair<torch::Tensor, torch::Tensor>> to_low_precision(torch::nn::Module& module,
                                                                      torch::ScalarType dtype);

class MasterWeights {
 public:
  // Converts the module (to_low_precision) and hands the optimizer the float32 copies in place
  // of the converted parameters, so that its state and steps are in float32. Before the
  // optimizer's first step.
  MasterWeights(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                torch::ScalarType dtype);
  // After backward: each master's gradient is its model parameter's, in float32.
  void gradients_to_masters();
  // After the optimizer's step: the model's parameters take the masters' new values.
  void masters_to_model();
  // The model's low-precision gradients released, as the optimizer's are after a step.
  void release_model_gradients();
  // What the optimizer steps: the masters and the parameters left as they were.
  std::vector<torch::Tensor> optimizer_parameters() const;

 private:
  torch::optim::Optimizer& optimizer_;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> pairs_;  // (model's, master)
};

}  // namespace engine::train
