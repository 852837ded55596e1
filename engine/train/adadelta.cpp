#include "engine/train/adadelta.hpp"

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

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = closure_loss(closure);
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const AdadeltaOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto grad = p.grad();
      if (options.weight_decay() != 0) grad = grad.add(p, options.weight_decay());
      auto key = optimizer_state_key(p);
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto state = std::make_unique<AdadeltaParamState>();
        state->square_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        state->acc_delta(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(state)).first;
      }
      auto& state = static_cast<AdadeltaParamState&>(*it->second);
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
  }
  return loss;
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
