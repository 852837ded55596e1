// The trainer's optimizers beyond one stepped once per batch: LBFGS, which evaluates the loss
// through a closure, and several optimizers a script names (TrainSpec::optimizers: a GAN's
// generator and discriminator), which a train_batch hook steps by name (ctx:step('generator')),
// each with its own clipping and scheduler; the batch counts as one step of the run.
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/lbfgs.h>

#include "engine/core/activity.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"

namespace engine::train {
// LBFGS evaluates the loss several times per step through a closure; the batch's metrics are
// those of the first evaluation, as the step returns it.
BatchResult Trainer::lbfgs_batch(const data::Batch& batch) {
  // moved once: the closure runs up to max_iter times per step
  data::Batch on_device = batch;
  on_device.move_to(spec_.device);
  const auto& target = on_device.target;
  BatchResult result;
  auto closure = [&]() -> torch::Tensor {
    spec_.optimizer->zero_grad();
    auto output = forward_batch(spec_.model, on_device, spec_.device, input_layout(spec_.options));
    (*check_targets_)(*spec_.loss, output, target);
    auto loss = (*spec_.loss)(output, target);
    if (!result.output.defined()) {
      result.output = output.detach();
      result.values["loss"] = loss.detach().to(torch::kFloat64).item<double>();
    }
    if (!backward(loss)) return loss.detach().zero_();  // NaN skipped: nothing to follow
    return loss;
  };
  spec_.optimizer->step(closure);
  batch_stepped_ = true;
  micro_ = 0;
  release_gradients(*spec_.optimizer);
  ++state_.step;
  ++steps_here_;
  return result;
}

std::string Trainer::optimizer_names() const {
  std::vector<std::string> names;
  for (const auto& o : spec_.optimizers) names.push_back(o.name);
  return core::join(names);
}

void Trainer::check_several_optimizers() const {
  if (spec_.optimizers.empty()) return;
  const std::string names = optimizer_names();
  const auto refuse = [&](const std::string& what) {
    throw core::UsageError("the script has several optimizers (" + names + "): " + what);
  };
  if (!spec_.hooks.train_batch) {
    refuse("a train_batch hook steps them by name, ctx:step('" + spec_.optimizers[0].name +
           "'); the built-in step knows one optimizer");
  }
  const auto& o = spec_.options;
  if (o.accumulate > 1) refuse("accumulate > 1 is for one optimizer");
  if (o.loss_scale.active(o.precision)) refuse("float16 and loss_scale are for one optimizer");
  if (o.cuda_graphs) refuse("cuda_graphs records the built-in step of one optimizer");
  if (parallel_) refuse("data-parallel training (--nproc) takes one optimizer for now");
  for (const auto& named : spec_.optimizers) {
    if (dynamic_cast<torch::optim::LBFGS*>(named.optimizer.get())) {
      refuse("LBFGS ('" + named.name + "') re-evaluates the loss inside its step and runs alone");
    }
  }
}

bool Trainer::step(const std::string& name) {
  if (spec_.optimizers.empty()) {
    throw core::UsageError("ctx:step('" + name +
                           "'): the script has one optimizer, which ctx:step() steps");
  }
  auto named = std::find_if(spec_.optimizers.begin(), spec_.optimizers.end(),
                            [&](const NamedOptimizer& o) { return o.name == name; });
  if (named == spec_.optimizers.end()) {
    throw core::UsageError("ctx:step('" + name + "'): no optimizer of that name (the script's: " +
                           optimizer_names() + ")");
  }
  if (!stepped_names_.insert(name).second) {
    throw core::UsageError("train_batch called ctx:step('" + name + "') twice for one batch");
  }
  batch_stepped_ = true;
  core::Activity activity("an optimizer's update (ctx:step) at step", state_.step + 1);
  std::vector<torch::Tensor> params;
  for (const auto& group : named->optimizer->param_groups()) {
    for (const auto& p : group.params()) params.push_back(p);
  }
  const auto& o = spec_.options;
  if (o.clip_grad_value > 0) torch::nn::utils::clip_grad_value_(params, o.clip_grad_value);
  if (o.clip_grad_norm > 0) {
    torch::nn::utils::clip_grad_norm_(params, o.clip_grad_norm, o.clip_norm_type);
  }
  named->optimizer->step();
  release_gradients(*named->optimizer);
  if (named->scheduler && named->scheduler->mode() == StepMode::kStep) named->scheduler->step();
  return true;
}

void Trainer::count_named_steps() {
  stepped_names_.clear();
  ++state_.step;
  ++steps_here_;
}

void Trainer::release_all_gradients() {
  if (spec_.optimizers.empty()) {
    release_gradients(*spec_.optimizer);
    return;
  }
  for (auto& named : spec_.optimizers) release_gradients(*named.optimizer);
}

void Trainer::step_epoch_schedulers() {
  auto step_one = [](Scheduler* s) {
    if (s && s->mode() == StepMode::kEpoch && s->watched_metric().empty()) s->step();
  };
  step_one(spec_.scheduler.get());
  for (auto& named : spec_.optimizers) step_one(named.scheduler.get());
}

void Trainer::observe_schedulers() {
  auto observe_one = [&](Scheduler* s) {
    if (s && !s->watched_metric().empty())
      s->observe(watched_value(parse_goal(s->watched_metric())));
  };
  observe_one(spec_.scheduler.get());
  for (auto& named : spec_.optimizers) observe_one(named.scheduler.get());
}

void Trainer::add_rates(std::map<std::string, double>& values) const {
  values["lr"] = current_lr(*spec_.optimizer);
  for (const auto& named : spec_.optimizers)
    values["lr_" + named.name] = current_lr(*named.optimizer);
}

}  // namespace engine::train
