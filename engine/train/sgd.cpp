#include "engine/train/sgd.hpp"

#include <ATen/Parallel.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_mul.h>

#include <algorithm>
#include <cmath>

#include "engine/train/closure_loss.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/partial_step.hpp"

namespace engine::train {
namespace {

// Elements per task of at::parallel_for: libtorch's own grain for elementwise kernels.
constexpr int64_t kGrain = at::internal::GRAIN_SIZE;

// Scalars as libtorch's float kernels see them: converted to float once.
struct Coefficients {
  float weight_decay, momentum, gradient_scale, minus_lr;
  bool nesterov, first_step;
};

bool fusable(const torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& buffer) {
  auto plain = [&](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
           t.layout() == torch::kStrided && t.is_contiguous() && t.sizes() == p.sizes();
  };
  return plain(p) && plain(grad) && (!buffer.defined() || plain(buffer));
}

// One parameter: the arithmetic of torch::optim::SGD::step (libtorch 1.13), element by element.
//   d_p = grad;  d_p = d_p.add(p, weight_decay)               fma(p, wd, g)
//   buf = clone(d_p) at the first step, else buf.mul_(momentum).add_(d_p, 1 - dampening)
//   d_p = nesterov ? d_p.add(buf, momentum) : buf             fma(buf, m, d_p)
//   p.add_(d_p, -lr)                                          fma(d_p, -lr, p)
// ATen's vectorized add computes self + alpha * other as one fused multiply-add; mul_ rounds.
// Each case is its own loop so that the compiler vectorizes it; on x86-64 a second copy for
// CPUs with FMA instructions (chosen at load time) does the fma in hardware instead of calling
// libm's fmaf.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ENGINE_FMA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ENGINE_FMA_CLONES
#endif

template <bool kDecay, bool kNesterov>
inline __attribute__((always_inline)) void momentum_range(float* __restrict p,
                                                          const float* __restrict g,
                                                          float* __restrict buf, int64_t n,
                                                          float decay, float momentum, float scale,
                                                          float minus_lr) {
  for (int64_t i = 0; i < n; ++i) {
    const float d = kDecay ? std::fma(p[i], decay, g[i]) : g[i];
    const float b = std::fma(d, scale, buf[i] * momentum);
    buf[i] = b;
    p[i] = std::fma(kNesterov ? std::fma(b, momentum, d) : b, minus_lr, p[i]);
  }
}

// the first step with momentum (the buffer starts as the gradient), or no momentum at all
template <bool kDecay, bool kNesterov>
inline __attribute__((always_inline)) void plain_range(float* __restrict p,
                                                       const float* __restrict g,
                                                       float* __restrict buf, int64_t n,
                                                       float decay, float momentum,
                                                       float minus_lr) {
  for (int64_t i = 0; i < n; ++i) {
    const float d = kDecay ? std::fma(p[i], decay, g[i]) : g[i];
    if (buf) buf[i] = d;
    p[i] = std::fma(kNesterov ? std::fma(d, momentum, d) : d, minus_lr, p[i]);
  }
}

// The loops are inlined into each copy, so each copy has its own instructions.
ENGINE_FMA_CLONES
void update_range(float* p, const float* g, float* buf, int64_t n, const Coefficients& c) {
  const float wd = c.weight_decay, m = c.momentum, scale = c.gradient_scale, lr = c.minus_lr;
  const bool decay = wd != 0.0f;
  if (buf && !c.first_step) {
    if (decay && c.nesterov)
      momentum_range<true, true>(p, g, buf, n, wd, m, scale, lr);
    else if (decay)
      momentum_range<true, false>(p, g, buf, n, wd, m, scale, lr);
    else if (c.nesterov)
      momentum_range<false, true>(p, g, buf, n, wd, m, scale, lr);
    else
      momentum_range<false, false>(p, g, buf, n, wd, m, scale, lr);
  } else {
    if (decay && c.nesterov)
      plain_range<true, true>(p, g, buf, n, wd, m, lr);
    else if (decay)
      plain_range<true, false>(p, g, buf, n, wd, m, lr);
    else if (c.nesterov)
      plain_range<false, true>(p, g, buf, n, wd, m, lr);
    else
      plain_range<false, false>(p, g, buf, n, wd, m, lr);
  }
}

void update(float* p, const float* g, float* buf, int64_t n, const Coefficients& c) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    update_range(p + begin, g + begin, buf ? buf + begin : nullptr, end - begin, c);
  });
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
      Coefficients c{};
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
      update(p.data_ptr<float>(), grad.data_ptr<float>(), buf, p.numel(), c);
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
