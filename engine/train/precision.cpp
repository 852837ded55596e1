#include "engine/train/precision.hpp"

#include <ATen/autocast_mode.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/torch_compat.hpp"

namespace engine::train {

Precision parse_precision(const std::string& name) {
  if (name == "float32") return Precision::kFloat32;
  if (name == "bfloat16") return Precision::kBFloat16;
  if (name == "float16") return Precision::kFloat16;
  throw core::UsageError("precision must be 'float32', 'bfloat16' or 'float16', got '" + name +
                         "'");
}

std::string precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBFloat16:
      return "bfloat16";
    case Precision::kFloat16:
      return "float16";
    case Precision::kFloat16Master:
      return "float16_master";
    default:
      return "float32";
  }
}

void check_precision(Precision precision, const torch::Device& device) {
  const bool half = precision == Precision::kFloat16 || precision == Precision::kFloat16Master;
  if (half && !device.is_cuda()) {
    throw core::UsageError("precision '" + precision_name(precision) +
                           "' needs a CUDA device (it relies on a gradient scaler and CUDA "
                           "kernels); on " +
                           device.str() + " use 'bfloat16'");
  }
}

namespace {

// Autocast's state per device type: libtorch 2.4 took the device type as an argument and
// deprecated the CUDA- and CPU-specific functions (each call then prints a warning).
bool autocast_enabled(bool cuda) {
#if ENGINE_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
#else
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

at::ScalarType autocast_dtype(bool cuda) {
#if ENGINE_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU);
#else
  return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

void set_autocast_enabled(bool cuda, bool enabled) {
#if ENGINE_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, enabled);
#else
  if (cuda) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

void set_autocast_dtype(bool cuda, at::ScalarType dtype) {
#if ENGINE_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, dtype);
#else
  if (cuda) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

}  // namespace

AutocastScope::AutocastScope(Precision precision, const torch::Device& device)
    : cuda_(device.is_cuda()) {
  was_enabled_ = autocast_enabled(cuda_);
  was_dtype_ = autocast_dtype(cuda_);
  // float16 with master weights runs a float16 model without autocast
  const bool enable = precision == Precision::kBFloat16 || precision == Precision::kFloat16;
  set_autocast_enabled(cuda_, enable);
  if (enable)
    set_autocast_dtype(cuda_, precision == Precision::kFloat16 ? at::kHalf : at::kBFloat16);
  // the nesting count decides when autocast's cast cache is cleared, as torch.autocast does
  if (enable) at::autocast::increment_nesting();
  enabled_here_ = enable;
}

AutocastScope::~AutocastScope() {
  if (enabled_here_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(cuda_, was_enabled_);
  set_autocast_dtype(cuda_, was_dtype_);
}

GradScaler::GradScaler(double initial_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval)
    : scale_(initial_scale),
      growth_(growth_factor),
      backoff_(backoff_factor),
      interval_(growth_interval) {
  if (!(initial_scale > 0) || !std::isfinite(initial_scale)) {
    throw core::UsageError("loss_scale init_scale must be a positive finite number, got " +
                           core::number_string(initial_scale));
  }
  if (!(growth_factor > 1)) {
    throw core::UsageError("loss_scale growth_factor must be > 1, got " +
                           core::number_string(growth_factor));
  }
  if (!(backoff_factor > 0 && backoff_factor < 1)) {
    throw core::UsageError("loss_scale backoff_factor must be between 0 and 1, got " +
                           core::number_string(backoff_factor));
  }
  if (growth_interval < 1) {
    throw core::UsageError("loss_scale growth_interval must be >= 1, got " +
                           std::to_string(growth_interval));
  }
}

bool GradScaler::unscale(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  const double inverse = 1.0 / scale_;
  // On an accelerator ATen's multi-tensor kernel unscales every gradient of a device and type
  // and raises one flag for them all, as PyTorch's GradScaler does; a few launches for the
  // whole model. (libtorch 1.13 has that kernel for CUDA only: the CPU keeps the loop below.)
  std::map<std::string, std::vector<torch::Tensor>> together;  // by device and type
  // one flag tensor on the gradients' device, read once: a single device sync per step
  torch::Tensor non_finite;
  for (const auto& p : params) {
    auto grad = p.grad();
    if (!grad.defined()) continue;
    if (!grad.device().is_cpu() && !grad.is_sparse()) {
      together[grad.device().str() + " " + c10::toString(grad.scalar_type())].push_back(grad);
      continue;
    }
    grad.mul_(inverse);
    auto bad = torch::logical_not(torch::isfinite(grad)).any();
    non_finite = non_finite.defined() ? torch::logical_or(non_finite, bad) : bad;
  }
  for (auto& [where, grads] : together) {
    const auto on = torch::TensorOptions().device(grads[0].device()).dtype(torch::kFloat32);
    auto found = torch::zeros({1}, on);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, torch::full({1}, inverse, on));
    auto bad = found.gt(0).any();
    non_finite =
        non_finite.defined() ? torch::logical_or(non_finite, bad.to(non_finite.device())) : bad;
  }
  return !non_finite.defined() || !non_finite.item<bool>();
}

void GradScaler::update(bool finite) {
  if (!finite) {
    scale_ *= backoff_;
    good_steps_ = 0;
    return;
  }
  if (++good_steps_ >= interval_) {
    // never past float32's range, where the scaled loss itself would be infinite (as PyTorch)
    const double grown = scale_ * growth_;
    if (grown <= std::numeric_limits<float>::max()) scale_ = grown;
    good_steps_ = 0;
  }
}

void GradScaler::restore(double scale, int64_t growth_tracker) {
  scale_ = scale;
  good_steps_ = growth_tracker;
}

}  // namespace engine::train
