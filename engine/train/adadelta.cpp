#include "engine/train/adadelta.hpp"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_sqrt.h>

#include "engine/core/errors.hpp"
#include "engine/train/closure_loss.hpp"
#include "engine/train/optimizer_state_key.hpp"

namespace engine::train {

Adadelta::Adadelta(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                   AdadeltaOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdadeltaOptions>(defaults)) {
  if (defaults.lr() < 0) throw core::UsageError("Adadelta: lr must be >= 0");
  if (defaults.rho() < 0 || defaults.rho() > 1)
    throw core::UsageError("Adadelta: rho must be in [0, 1]");
  if (defaults.eps() < 0) throw core::UsageError("Adadelta: eps must be >= 0");
  if (defaults.weight_decay() < 0) throw core::UsageError("Adadelta: weight_decay must be >= 0");
}

void Adadelta::count_recorded_step(int64_t steps) {
  for (auto& [key, state] : state_) {
    auto& adadelta = static_cast<AdadeltaParamState&>(*state);
    adadelta.step(adadelta.step() + steps);
  }
}

AdadeltaParamState& Adadelta::state_of(const torch::Tensor& p) {
  auto key = optimizer_state_key(p);
  auto it = state_.find(key);
  if (it == state_.end()) {
    auto state = std::make_unique<AdadeltaParamState>();
    state->square_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    state->acc_delta(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    it = state_.emplace(key, std::move(state)).first;
  }
  return static_cast<AdadeltaParamState&>(*it->second);
}

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = closure_loss(closure);
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const AdadeltaOptions&>(group.options());
    std::vector<torch::Tensor> together;  // for the multi-tensor kernels (CUDA's parameters)
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if ((!p.device().is_cpu() || multi_tensor_on_cpu_) && !p.grad().is_sparse()) {
        together.push_back(p);
        continue;
      }
      auto grad = p.grad();
      if (options.weight_decay() != 0) grad = grad.add(p, options.weight_decay());
      auto& state = state_of(p);
      state.step(state.step() + 1);
      const double rho = options.rho(), eps = options.eps();
      auto& square_avg = state.square_avg();
      auto& acc_delta = state.acc_delta();
      square_avg.mul_(rho).addcmul_(grad, grad, 1 - rho);
      auto std = square_avg.add(eps).sqrt_();
      auto delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad);
      acc_delta.mul_(rho).addcmul_(delta, delta, 1 - rho);
      p.add_(delta, -options.lr());
    }
    if (!together.empty()) step_together(options, together);
  }
  return loss;
}

// The operations of the loop above, each applied to every parameter at once.
void Adadelta::step_together(const AdadeltaOptions& options,
                             const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads, square_avgs, acc_deltas;
  for (const auto& p : params) {
    grads.push_back(p.grad());
    auto& state = state_of(p);
    state.step(state.step() + 1);
    square_avgs.push_back(state.square_avg());
    acc_deltas.push_back(state.acc_delta());
  }
  if (options.weight_decay() != 0) grads = at::_foreach_add(grads, params, options.weight_decay());
  const double rho = options.rho(), eps = options.eps();
  at::_foreach_mul_(square_avgs, rho);
  at::_foreach_addcmul_(square_avgs, grads, grads, 1 - rho);
  auto std = at::_foreach_add(square_avgs, eps);
  at::_foreach_sqrt_(std);
  auto delta = at::_foreach_add(acc_deltas, eps);
  at::_foreach_sqrt_(delta);
  at::_foreach_div_(delta, std);
  at::_foreach_mul_(delta, grads);
  at::_foreach_mul_(acc_deltas, rho);
  at::_foreach_addcmul_(acc_deltas, delta, delta, 1 - rho);
  at::_foreach_add_(params, delta, -options.lr());
}

void AdadeltaOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, rho);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

void AdadeltaOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(rho);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void AdadeltaParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, square_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, acc_delta);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
}

void AdadeltaParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(square_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(acc_delta);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
}

void Adadelta::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

void Adadelta::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
}

}  // namespace engine::train
