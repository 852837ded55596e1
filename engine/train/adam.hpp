// libtorch's Adam and AdamW with a multi-tensor step for parameters on an accelerator.
//
// torch::optim::Adam updates each parameter with about ten tensor operations; on CUDA each is a
// kernel launch, so a model of a hundred parameters pays a thousand launches a step. These
// classes update a group's CUDA parameters together through ATen's _foreach_ kernels (PyTorch's
// Adam(foreach=True), its default on CUDA): the same operations in the same order, a few dozen
// launches whatever the model. CPU parameters take libtorch's own step unchanged; options,
// state and serialization are libtorch's, so checkpoints and schedulers see no difference.
#pragma once

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <vector>

#include "engine/train/multi_tensor_switch.hpp"

namespace engine::train {

class FusedAdam : public torch::optim::Adam, public MultiTensorSwitch {
 public:
  using torch::optim::Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class FusedAdamW : public torch::optim::AdamW, public MultiTensorSwitch {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace engine::train
