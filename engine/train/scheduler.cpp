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

Scheduler::Scheduler(std::shared_ptr<torch::optim::Optimizer> optimizer, StepMode mode,
                     std::string name)
    : optimizer_(std::move(optimizer)), mode_(mode), name_(std::move(name)) {}

ClosedFormLR::ClosedFormLR(std::shared_ptr<torch::optim::Optimizer> optimizer, Rate rate,
                           StepMode mode, std::string name)
    : Scheduler(std::move(optimizer), mode, std::move(name)), rate_(std::move(rate)) {
  for (const auto& group : optimizer_->param_groups()) base_.push_back(group.options().get_lr());
  apply();
}

void ClosedFormLR::apply() {
  auto& groups = optimizer_->param_groups();
  for (size_t g = 0; g < groups.size() && g < base_.size(); ++g) {
    groups[g].options().set_lr(rate_(base_[g], t_));
  }
}

void ClosedFormLR::step() {
  ++t_;
  apply();
}

void ClosedFormLR::load_state(const std::map<std::string, double>& state) {
  auto it = state.find("steps");
  if (it != state.end()) t_ = static_cast<int64_t>(it->second);
}

Rate step_rate(int64_t step_size, double gamma) {
  if (step_size < 1) throw core::UsageError("StepLR: step_size must be >= 1");
  return [step_size, gamma](double base, int64_t t) {
    return base * std::pow(gamma, static_cast<double>(t / step_size));
  };
}

Rate exponential_rate(double gamma) {
  return [gamma](double base, int64_t t) { return base * std::pow(gamma, t); };
}

Rate multi_step_rate(std::vector<int64_t> milestones, double gamma) {
  std::sort(milestones.begin(), milestones.end());
  return [milestones, gamma](double base, int64_t t) {
    // milestones passed: bisect_right, as PyTorch
    const auto passed =
        std::upper_bound(milestones.begin(), milestones.end(), t) -
        milestones.begin();
    return base * std::pow(gamma, static_cast<double>(passed));
  };
}

Rate cosine_annealing_rate(int64_t t_max, double eta_min) {
  if (t_max < 1) throw core::UsageError("CosineAnnealingLR: T_max must be >= 1");
  return [t_max, eta_min](double base, int64_t t) {
    const double pi = std::acos(-1.0);
    return eta_min + (base - eta_min) *
                         (1 + std::cos(pi * static_cast<double>(t) / static_cast<double>(t_max))) /
                         2;
  };
}

Rate linear_rate(double start_factor, double end_factor, int64_t total_iters) {
  if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1)) {
    throw core::UsageError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1]");
  }
  if (total_iters < 1) throw core::UsageError("LinearLR: total_iters must be >= 1");
  return [=](double base, int64_t t) {
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
