// libtorch's SGD with its per-parameter update done in one pass over memory.
//
// torch::optim::SGD updates each parameter with three to five tensor operations (momentum
// buf.mul_, buf.add_, p.add_, and weight decay or Nesterov's extra add), each a full pass over
// the parameter and a dispatch. For a small model those passes are a sixth of a training step.
// FusedSGD computes the same expressions element by element, rounding where libtorch's kernels
// round (a multiply, then a fused multiply-add for each "add with alpha"), so its results are
// those of torch::optim::SGD bit for bit; options, state (momentum buffers) and serialization
// are libtorch's own. Parameters it cannot take in one pass (not float32 on the CPU, not
// contiguous, sparse gradients) go through torch::optim::SGD::step unchanged.
#pragma once

#include <torch/optim/sgd.h>

#include <vector>

#include "engine/train/multi_tensor_switch.hpp"

namespace engine::train {

// On an accelerator (CUDA) the parameters of a group are updated together through ATen's
// multi-tensor kernels (_foreach_mul_, _foreach_add_: PyTorch's SGD(foreach=True), its default
// on CUDA): the same operations as torch::optim::SGD's, a handful of launches for the whole
// model instead of three to five per parameter.
class FusedSGD : public torch::optim::SGD, public MultiTensorSwitch {
 public:
  using torch::optim::SGD::SGD;
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  void step_together(const torch::optim::SGDOptions& options,
                     const std::vector<torch::Tensor>& params);
};

// Gradients set to undefined rather than filled with zeros (PyTorch's zero_grad(set_to_none)
// and its default since 2.0): no pass over memory now, and the next backward stores its
// gradient instead of adding it to zeros. The values that follow are the same.
void release_gradients(torch::optim::Optimizer& optimizer);

// Fills the gradients that are there with zeros, keeping their tensors (PyTorch's
// zero_grad(set_to_none=False)): Optimizer::zero_grad did this in libtorch 1.13, releases them
// in 2.x.
void zero_gradients(torch::optim::Optimizer& optimizer);

}  // namespace engine::train
