#include "engine/train/sgd_kernel.hpp"

#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>  // at::internal::GRAIN_SIZE

#include <cmath>

namespace engine::train {
namespace {

// Elements per task of at::parallel_for: libtorch's own grain for elementwise kernels.
constexpr int64_t kGrain = at::internal::GRAIN_SIZE;

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
void update_range(float* p, const float* g, float* buf, int64_t n, const SgdCoefficients& c) {
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

}  // namespace

void sgd_update(float* p, const float* g, float* buf, int64_t n, const SgdCoefficients& c) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    update_range(p + begin, g + begin, buf ? buf + begin : nullptr, end - begin, c);
  });
}

}  // namespace engine::train
