// Mixed precision: autocast scopes (bfloat16 on CPU and CUDA, float16 on CUDA) and the gradient
// scaler float16 needs, as torch.autocast and torch.cuda.amp.GradScaler do.
#pragma once

#include <torch/types.h>

#include <vector>

#include "engine/train/spec.hpp"

namespace engine::train {

// Throws UsageError when the precision cannot run on the device (float16 on CPU).
void check_precision(Precision precision, const torch::Device& device);

// Turns autocast on for the device type for its lifetime (nothing for float32), restoring the
// previous state after. Constructed with float32 it turns autocast off (for backward).
class AutocastScope {
 public:
  AutocastScope(Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool cuda_;
  bool enabled_here_ = false;
  bool was_enabled_;
  at::ScalarType was_dtype_;
};

// Dynamic loss scaling: the loss is multiplied by `scale` before backward; gradients are divided
// by it before clipping and the optimizer step, which is skipped when any is not finite (the
// scale then halves); after `growth_interval` good steps in a row it doubles.
class GradScaler {
 public:
  explicit GradScaler(double initial_scale = 65536.0, double growth_factor = 2.0,
                      double backoff_factor = 0.5, int64_t growth_interval = 2000);
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Divides the gradients by the scale; returns false when one of them is NaN or infinite.
  bool unscale(const std::vector<torch::Tensor>& params);
  // After a step (taken when finite): grows or backs off the scale.
  void update(bool finite);
  double current_scale() const { return scale_; }
  int64_t growth_tracker() const { return good_steps_; }
  void restore(double scale, int64_t growth_tracker);

 private:
  double scale_, growth_, backoff_;
  int64_t interval_, good_steps_ = 0;
};

}  // namespace engine::train
