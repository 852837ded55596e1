// The loss scaler (docs/training.md, "Loss scaling") and the optimizer's step it guards. In a
// run that reads its values at log steps only (deferred reads: a GPU's default), the scale, its
// good-step count and the skipped steps live in device scalars, for eager steps as for a
// recorded CUDA graph: an overflowing step is undone on the device, so no step waits for the
// host to read a flag. The host's GradScaler takes them back at log steps, checkpoints and
// epoch ends, in the same copy as the step's other values (Trainer::settle).
#include <torch/nn/utils/clip_grad.h>

#include <limits>

#include "engine/core/activity.hpp"
#include "engine/core/format.hpp"
#include "engine/core/log.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"

namespace engine::train {

namespace {

constexpr int kOverflowNotes = 3;  // skipped steps logged one by one; the rest are counted

// What an optimizer's step changes besides the parameters: SGD's momentum buffers, Adadelta's
// running averages (the optimizers a graph records).
std::vector<torch::Tensor> optimizer_state_tensors(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> tensors;
  for (auto& [key, state] : optimizer.state()) {
    if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(state.get())) {
      if (sgd->momentum_buffer().defined()) tensors.push_back(sgd->momentum_buffer());
    } else if (auto* adadelta = dynamic_cast<AdadeltaParamState*>(state.get())) {
      tensors.push_back(adadelta->square_avg());
      tensors.push_back(adadelta->acc_delta());
    }
  }
  return tensors;
}

}  // namespace

void Trainer::prepare_scaler() {
  if (!use_scaler_) return;
  const auto on = torch::TensorOptions().device(spec_.device).dtype(torch::kFloat32);
  scale_on_device_ = torch::zeros({}, on);
  growth_on_device_ = torch::zeros({}, on);
  skipped_on_device_ = torch::zeros({}, on);
  // undoing a step needs every tensor the optimizer changes (SGD's and Adadelta's, the
  // optimizers a graph records too) and a step that sees the gradients as they are
  const auto& o = spec_.options;
  const bool undoable = dynamic_cast<FusedSGD*>(spec_.optimizer.get()) ||
                        dynamic_cast<Adadelta*>(spec_.optimizer.get());
  scales_on_device_ = deferred_ && undoable && !master_ && !lbfgs_ && spec_.optimizers.empty() &&
                      o.clip_grad_norm == 0 && o.clip_grad_value == 0;
}

bool Trainer::scaling_on_device() {
  if (!scales_on_device_) return false;
  // looked up until the optimizer has made its state; once made, it stays
  if (!optimizer_state_made_) optimizer_state_made_ = optimizer_has_state();
  return optimizer_state_made_;
}

torch::Tensor Trainer::scaled_loss(const torch::Tensor& loss) {
  // the step before the optimizer has its state runs on the host's scaler (optimizer_step)
  if (!scaling_on_device()) return scaler_.scale(loss);
  push_scaler();
  return loss * scale_on_device_;
}

// GradScaler::unscale, the step when finite and GradScaler::update, as device operations: the
// same arithmetic (the scale is a power of two with the default factors, so its float32 copy
// is exact), with "skip the step" done by putting back what the step changed.
void Trainer::scaled_step_on_device() {
  const auto inverse = scale_on_device_.reciprocal();
  auto overflow = torch::zeros({}, scale_on_device_.options().dtype(torch::kBool));
  for (auto& p : stepped_) {
    auto grad = p.grad();
    if (!grad.defined()) continue;
    grad.mul_(inverse);
    overflow = overflow.logical_or(torch::logical_not(torch::isfinite(grad)).any());
  }
  std::vector<std::pair<torch::Tensor, torch::Tensor>> before;
  for (const auto& t : stepped_) before.emplace_back(t, t.detach().clone());
  for (const auto& t : optimizer_state_tensors(*spec_.optimizer)) before.emplace_back(t, t.clone());
  spec_.optimizer->step();
  {
    torch::NoGradGuard no_grad;
    for (auto& [t, old] : before) t.copy_(torch::where(overflow, old, t));
  }
  const auto& scaling = spec_.options.loss_scale;
  const auto grown = scale_on_device_ * scaling.growth_factor;
  const auto counted = growth_on_device_ + 1;
  const auto grow = torch::logical_and(torch::logical_not(overflow),
                                       counted >= static_cast<double>(scaling.growth_interval));
  const auto within = grown <= static_cast<double>(std::numeric_limits<float>::max());
  const auto scale =
      torch::where(overflow, scale_on_device_ * scaling.backoff_factor,
                   torch::where(torch::logical_and(grow, within), grown, scale_on_device_));
  growth_on_device_.copy_(
      torch::where(torch::logical_or(overflow, grow), torch::zeros_like(counted), counted));
  scale_on_device_.copy_(scale);
  skipped_on_device_.add_(overflow.to(skipped_on_device_.scalar_type()));
}

void Trainer::graph_scaled_step() {
  (graph_loss_ * scale_on_device_).backward();
  scaled_step_on_device();
}

void Trainer::push_scaler() {
  if (!use_scaler_ || scaler_on_device_) return;
  scale_on_device_.fill_(scaler_.current_scale());
  growth_on_device_.fill_(static_cast<double>(scaler_.growth_tracker()));
  skipped_on_device_.zero_();
  scaler_on_device_ = true;
}

std::vector<torch::Tensor> Trainer::scaler_tensors() const {
  if (!scaler_on_device_) return {};
  return {scale_on_device_, growth_on_device_, skipped_on_device_};
}

void Trainer::pull_scaler() {
  if (!scaler_on_device_) return;
  const auto read =
      torch::stack({scale_on_device_.to(torch::kFloat64), growth_on_device_.to(torch::kFloat64),
                    skipped_on_device_.to(torch::kFloat64)})
          .cpu();
  const double* values = read.data_ptr<double>();
  take_scaler_values({values[0], values[1], values[2]});
}

void Trainer::take_scaler_values(const std::vector<double>& values) {
  if (!scaler_on_device_ || values.size() != 3) return;
  scaler_on_device_ = false;
  scaler_.restore(values[0], static_cast<int64_t>(values[1]));
  state_.grad_scale = scaler_.current_scale();
  state_.grad_scale_tracker = scaler_.growth_tracker();
  const auto skipped = static_cast<int64_t>(values[2]);
  if (skipped == 0) return;
  state_.epoch_overflow_skipped += skipped;
  // Adadelta counted the steps it took, whether or not they were put back: a replay counts on
  // the host (count_recorded_step), an eager step or the stand-in's replay in step() itself
  if (auto* adadelta = dynamic_cast<Adadelta*>(spec_.optimizer.get())) {
    adadelta->count_recorded_step(-skipped);
  }
  core::log::info("gradient overflow: {} step{} skipped by step {}, loss scale now {}", skipped,
                  skipped == 1 ? "" : "s", state_.step,
                  core::number_string(scaler_.current_scale()));
}

void Trainer::optimizer_step() {
  core::Activity activity("the optimizer's update at step", state_.step + 1);
  micro_ = 0;
  const auto& o = spec_.options;
  // a step that creates the optimizer's state (SGD's first momentum step) cannot be undone by
  // putting the state back: those run as the host's scaler says
  if (scaling_on_device()) {
    push_scaler();
    scaled_step_on_device();
    release_gradients(*spec_.optimizer);
    ++state_.step;
    ++steps_here_;
    return;
  }
  pull_scaler();  // the scale the loss was multiplied by, when it was the device's
  bool finite = true;
  if (master_) master_->gradients_to_masters();
  if (use_scaler_) finite = scaler_.unscale(stepped_);
  if (finite && o.clip_grad_value > 0)
    torch::nn::utils::clip_grad_value_(stepped_, o.clip_grad_value);
  if (finite && o.clip_grad_norm > 0) {
    torch::nn::utils::clip_grad_norm_(stepped_, o.clip_grad_norm, o.clip_norm_type);
  }
  if (finite) spec_.optimizer->step();
  if (finite && master_) master_->masters_to_model();
  if (master_) master_->release_model_gradients();
  if (use_scaler_) {
    if (!finite && ++state_.epoch_overflow_skipped <= kOverflowNotes) {
      core::log::info(
          "gradient overflow at step {}: step skipped, loss scale {} -> {}", state_.step + 1,
          core::number_string(scaler_.current_scale()),
          core::number_string(scaler_.current_scale() * spec_.options.loss_scale.backoff_factor));
    }
    scaler_.update(finite);
    state_.grad_scale = scaler_.current_scale();
    state_.grad_scale_tracker = scaler_.growth_tracker();
  }
  release_gradients(*spec_.optimizer);
  ++state_.step;
  ++steps_here_;
}

}  // namespace engine::train
