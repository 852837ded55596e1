#include "engine/train/scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/errors.hpp"

namespace engine::train {

StepMode parse_step_mode(const std::string& name) {
  if (name == "epoch") return StepMode::kEpoch;
  if (name == "step") return StepMode::kStep;
  throw core::UsageError("scheduler step mode must be 'epoch' or 'step', got '" + name + "'");
}

Scheduler::Scheduler(std::shared_ptr<torch::optim::Optimizer> optimizer,
                     std::unique_ptr<torch::optim::LRScheduler> scheduler, StepMode mode,
                     std::string name)
    : optimizer_(std::move(optimizer)),
      scheduler_(std::move(scheduler)),
      mode_(mode),
      name_(std::move(name)) {
  // PyTorch's schedulers take one step in their constructor (last_epoch 0); libtorch's do not,
  // so its StepLR would decay one call late. One step here, which leaves the rate unchanged,
  // aligns the counts: after k calls to step() the rate is PyTorch's after k calls.
  scheduler_->step();
}

ClosedFormLR::ClosedFormLR(torch::optim::Optimizer& optimizer, Rate rate)
    : LRScheduler(optimizer), base_(get_current_lrs()), rate_(std::move(rate)) {}

std::vector<double> ClosedFormLR::get_lrs() {
  std::vector<double> out;
  out.reserve(base_.size());
  for (double base : base_) out.push_back(rate_(base, step_count_));
  return out;
}

ClosedFormLR::Rate exponential_rate(double gamma) {
  return [gamma](double base, unsigned t) { return base * std::pow(gamma, t); };
}

ClosedFormLR::Rate multi_step_rate(std::vector<int64_t> milestones, double gamma) {
  std::sort(milestones.begin(), milestones.end());
  return [milestones, gamma](double base, unsigned t) {
    // milestones passed: bisect_right, as PyTorch
    const auto passed =
        std::upper_bound(milestones.begin(), milestones.end(), static_cast<int64_t>(t)) -
        milestones.begin();
    return base * std::pow(gamma, static_cast<double>(passed));
  };
}

ClosedFormLR::Rate cosine_annealing_rate(int64_t t_max, double eta_min) {
  if (t_max < 1) throw core::UsageError("CosineAnnealingLR: T_max must be >= 1");
  return [t_max, eta_min](double base, unsigned t) {
    const double pi = std::acos(-1.0);
    return eta_min + (base - eta_min) *
                         (1 + std::cos(pi * static_cast<double>(t) / static_cast<double>(t_max))) /
                         2;
  };
}

ClosedFormLR::Rate linear_rate(double start_factor, double end_factor, int64_t total_iters) {
  if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1)) {
    throw core::UsageError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1]");
  }
  if (total_iters < 1) throw core::UsageError("LinearLR: total_iters must be >= 1");
  return [=](double base, unsigned t) {
    const double done =
        static_cast<double>(std::min<int64_t>(t, total_iters)) / static_cast<double>(total_iters);
    return base * (start_factor + (end_factor - start_factor) * done);
  };
}

double current_lr(const torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

}  // namespace engine::train
