// Adadelta (Zeiler 2012), with PyTorch's defaults and update rule: libtorch 1.13's C++ API has
// no Adadelta, and pytorch/examples' MNIST recipe (our reference) uses it.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>

#include <vector>

#include "engine/train/multi_tensor_switch.hpp"

namespace engine::train {

struct AdadeltaOptions : public torch::optim::OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}
  TORCH_ARG(double, lr) = 1.0;
  TORCH_ARG(double, rho) = 0.9;
  TORCH_ARG(double, eps) = 1e-6;
  TORCH_ARG(double, weight_decay) = 0;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

struct AdadeltaParamState : public torch::optim::OptimizerCloneableParamState<AdadeltaParamState> {
  TORCH_ARG(torch::Tensor, square_avg);
  TORCH_ARG(torch::Tensor, acc_delta);
  TORCH_ARG(int64_t, step) = 0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Adadelta : public torch::optim::Optimizer, public MultiTensorSwitch {
 public:
  explicit Adadelta(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                    AdadeltaOptions defaults = {});
  explicit Adadelta(std::vector<torch::Tensor> params, AdadeltaOptions defaults = {})
      : Adadelta({torch::optim::OptimizerParamGroup(std::move(params))}, defaults) {}

  // On CUDA a group's parameters are updated together through ATen's multi-tensor kernels
  // (PyTorch's foreach=True): the same operations, a few launches for the whole model.
  torch::Tensor step(LossClosure closure = nullptr) override;
  // libtorch's optimizer serialization, so checkpoints restore Adadelta like the others
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  // `steps` more on every parameter's count: 1 for a step a CUDA graph replayed (the counts
  // live on the host, outside the graph), -1 for the recording, which counted a step that did
  // not run, -n for n steps the loss scaler undid on the device.
  void count_recorded_step(int64_t steps = 1);

 private:
  AdadeltaParamState& state_of(const torch::Tensor& p);
  void step_together(const AdadeltaOptions& options, const std::vector<torch::Tensor>& params);
};

}  // namespace engine::train
