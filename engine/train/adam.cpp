#include "engine/train/adam.hpp"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_addcdiv.h>
#include <ATen/ops/_foreach_addcmul.h>
#include <ATen/ops/_foreach_div.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_sqrt.h>

#include <cmath>
#include <map>

#include "engine/train/closure_loss.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/partial_step.hpp"

namespace engine::train {
namespace {

// The parameters the multi-tensor kernels take: dense ones on an accelerator (or on the CPU
// when asked), with their gradients there.
bool goes_together(const torch::Tensor& p, bool cpu_too) {
  const auto& grad = p.grad();
  return (!p.device().is_cpu() || cpu_too) && grad.defined() && !grad.is_sparse() &&
         p.layout() == torch::kStrided && grad.device() == p.device();
}

// The state of each parameter, made as libtorch's step makes it on first sight.
template <class State, class Options, class StateMap>
State& state_of(StateMap& states, const torch::Tensor& p, const Options& options) {
  const auto key = optimizer_state_key(p);
  auto found = states.find(key);
  if (found == states.end()) {
    auto state = std::make_unique<State>();
    state->step(0);
    state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    if (options.amsgrad()) {
      state->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    }
    found = states.emplace(key, std::move(state)).first;
  }
  return static_cast<State&>(*found->second);
}

// torch::optim::Adam(W)::step's operations for parameters at the same step count, each applied
// to all of them at once:
//   AdamW: p.mul_(1 - lr * weight_decay)        Adam: grad = grad.add(p, weight_decay)
//   exp_avg.mul_(beta1).add_(grad, 1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
//   denom = (exp_avg_sq.sqrt() / sqrt(bias_correction2)).add_(eps)   (amsgrad: the running max)
//   p.addcdiv_(exp_avg, denom, -lr / bias_correction1)
template <class Options, class State>
void step_together(const Options& options, bool decoupled, int64_t step,
                   const std::vector<torch::Tensor>& params, std::vector<State*>& states) {
  std::vector<torch::Tensor> grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
  for (size_t i = 0; i < params.size(); ++i) {
    grads.push_back(params[i].grad());
    exp_avgs.push_back(states[i]->exp_avg());
    exp_avg_sqs.push_back(states[i]->exp_avg_sq());
    if (options.amsgrad()) max_exp_avg_sqs.push_back(states[i]->max_exp_avg_sq());
  }
  const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  if (options.weight_decay() != 0) {
    if (decoupled) {
      at::_foreach_mul_(params, 1 - options.lr() * options.weight_decay());
    } else {
      grads = at::_foreach_add(grads, params, options.weight_decay());
    }
  }
  at::_foreach_mul_(exp_avgs, beta1);
  at::_foreach_add_(exp_avgs, grads, 1 - beta1);
  at::_foreach_mul_(exp_avg_sqs, beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
  std::vector<torch::Tensor> denom;
  if (options.amsgrad()) {
    for (size_t i = 0; i < params.size(); ++i) {
      torch::max_out(max_exp_avg_sqs[i], exp_avg_sqs[i], max_exp_avg_sqs[i]);
    }
    denom = at::_foreach_sqrt(max_exp_avg_sqs);
  } else {
    denom = at::_foreach_sqrt(exp_avg_sqs);
  }
  at::_foreach_div_(denom, std::sqrt(bias_correction2));
  at::_foreach_add_(denom, options.eps());
  at::_foreach_addcdiv_(params, exp_avgs, denom, -(options.lr() / bias_correction1));
}

// The groups' multi-tensor parameters stepped together, by step count (the bias corrections
// depend on it; a parameter that missed steps has its own); returns the rest for libtorch.
template <class Options, class State, class Groups, class StateMap>
std::vector<torch::Tensor> step_accelerated(Groups& groups, StateMap& states, bool decoupled,
                                            bool cpu_too) {
  std::vector<torch::Tensor> rest;
  for (auto& group : groups) {
    const auto& options = static_cast<const Options&>(group.options());
    std::map<int64_t, std::pair<std::vector<torch::Tensor>, std::vector<State*>>> by_step;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!goes_together(p, cpu_too)) {
        rest.push_back(p);
        continue;
      }
      auto& state = state_of<State>(states, p, options);
      state.step(state.step() + 1);
      auto& [params, group_states] = by_step[state.step()];
      params.push_back(p);
      group_states.push_back(&state);
    }
    for (auto& [step, together] : by_step) {
      step_together(options, decoupled, step, together.first, together.second);
    }
  }
  return rest;
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = closure_loss(closure);
  const auto rest = step_accelerated<torch::optim::AdamOptions, torch::optim::AdamParamState>(
      param_groups_, state_, false, multi_tensor_on_cpu_);
  step_only(param_groups_, rest, [this] { torch::optim::Adam::step(); });
  return loss;
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = closure_loss(closure);
  const auto rest = step_accelerated<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(
      param_groups_, state_, true, multi_tensor_on_cpu_);
  step_only(param_groups_, rest, [this] { torch::optim::AdamW::step(); });
  return loss;
}

}  // namespace engine::train
