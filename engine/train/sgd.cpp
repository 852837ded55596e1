#include "engine/train/sgd.hpp"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_mul.h>

#include <algorithm>

#include "engine/train/closure_loss.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/partial_step.hpp"
#include "engine/train/sgd_kernel.hpp"

namespace engine::train {
namespace {

bool fusable(const torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& buffer) {
  auto plain = [&](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
           t.layout() == torch::kStrided && t.is_contiguous() && t.sizes() == p.sizes();
  };
  return plain(p) && plain(grad) && (!buffer.defined() || plain(buffer));
}

// Parameters the multi-tensor kernels take: dense, of one device and floating type with their
// gradients.
bool together(const torch::Tensor& p, const torch::Tensor& grad) {
  return p.layout() == torch::kStrided && !grad.is_sparse() && p.is_floating_point() &&
         grad.device() == p.device() && grad.scalar_type() == p.scalar_type();
}

}  // namespace

torch::Tensor FusedSGD::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const torch::Tensor loss = closure_loss(closure);
  std::vector<torch::Tensor> left;  // parameters for libtorch's own step (usually none)
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    std::vector<torch::Tensor> multi;  // this group's parameters for the multi-tensor kernels
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if ((!p.device().is_cpu() || multi_tensor_on_cpu_) && together(p, p.grad())) {
        multi.push_back(p);
        continue;
      }
      const auto key = optimizer_state_key(p);
      auto found = state_.find(key);
      torch::Tensor buffer;
      if (found != state_.end()) {
        buffer = static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
      }
      const torch::Tensor& grad = p.grad();
      if (grad.is_sparse() || !fusable(p, grad, buffer)) {
        left.push_back(p);
        continue;
      }
      SgdCoefficients c{};
      c.weight_decay = static_cast<float>(o.weight_decay());
      c.momentum = static_cast<float>(o.momentum());
      c.gradient_scale = static_cast<float>(1 - o.dampening());
      c.minus_lr = static_cast<float>(-o.lr());
      c.nesterov = o.nesterov();
      c.first_step = false;
      float* buf = nullptr;
      if (o.momentum() != 0) {
        if (!buffer.defined()) {
          buffer = torch::empty_like(p, torch::MemoryFormat::Contiguous);
          auto state = std::make_unique<torch::optim::SGDParamState>();
          state->momentum_buffer(buffer);
          state_[key] = std::move(state);
          c.first_step = true;
        }
        buf = buffer.data_ptr<float>();
      }
      sgd_update(p.data_ptr<float>(), grad.data_ptr<float>(), buf, p.numel(), c);
    }
    if (!multi.empty()) step_together(o, multi);
  }
  step_only(param_groups_, left, [this] { torch::optim::SGD::step(); });
  return loss;
}

// torch::optim::SGD::step's operations, each applied to every parameter at once:
//   d_p = grad.add(p, weight_decay); buf = clone(d_p) at its first step, else
//   buf.mul_(momentum).add_(d_p, 1 - dampening); d_p = nesterov ? d_p.add(buf, momentum) : buf;
//   p.add_(d_p, -lr)
void FusedSGD::step_together(const torch::optim::SGDOptions& o,
                             const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) grads.push_back(p.grad());
  std::vector<torch::Tensor> d =
      o.weight_decay() != 0 ? at::_foreach_add(grads, params, o.weight_decay()) : grads;
  if (o.momentum() != 0) {
    std::vector<torch::Tensor> buffers(params.size()), going, going_d;  // going: not first
    for (size_t i = 0; i < params.size(); ++i) {
      const auto key = optimizer_state_key(params[i]);
      auto found = state_.find(key);
      if (found == state_.end()) {
        buffers[i] = torch::clone(d[i]).detach();
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(buffers[i]);
        state_[key] = std::move(state);
        continue;
      }
      buffers[i] = static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
      going.push_back(buffers[i]);
      going_d.push_back(d[i]);
    }
    if (!going.empty()) {
      at::_foreach_mul_(going, o.momentum());
      at::_foreach_add_(going, going_d, 1 - o.dampening());
    }
    d = o.nesterov() ? at::_foreach_add(d, buffers, o.momentum()) : buffers;
  }
  at::_foreach_add_(params, d, -1 * o.lr());
}

void release_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) p.mutable_grad().reset();
  }
}

void zero_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      auto& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      grad.detach_();  // as libtorch 1.13's Optimizer::zero_grad: off any graph, then zeros
      grad.zero_();
    }
  }
}

}  // namespace engine::train
