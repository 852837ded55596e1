#include "engine/train/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

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

ClosedFormLR::ClosedFormLR(std::shared_ptr<torch::optim::Optimizer> optimizer, Rate rate,
                           StepMode mode, std::string name, std::vector<double> bases)
    : Scheduler(std::move(optimizer), mode, std::move(name)),
      base_(std::move(bases)),
      rate_(std::move(rate)) {
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
        std::upper_bound(milestones.begin(), milestones.end(), t) - milestones.begin();
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

Rate lambda_rate(std::function<double(int64_t t)> factor) {
  struct Cache {
    int64_t t = -1;
    double value = 0;
  };
  auto cache = std::make_shared<Cache>();
  return [factor = std::move(factor), cache](double base, int64_t t) {
    if (cache->t != t) {
      cache->value = factor(t);
      cache->t = t;
    }
    return base * cache->value;
  };
}

Rate sequential_rate(std::vector<Rate> rates, std::vector<int64_t> milestones) {
  if (rates.empty()) throw core::UsageError("SequentialLR: give at least one scheduler");
  if (milestones.size() + 1 != rates.size()) {
    throw core::UsageError("SequentialLR: " + std::to_string(rates.size()) + " schedulers need " +
                           std::to_string(rates.size() - 1) + " milestones, got " +
                           std::to_string(milestones.size()));
  }
  if (!std::is_sorted(milestones.begin(), milestones.end())) {
    throw core::UsageError("SequentialLR: milestones must be increasing");
  }
  return [rates = std::move(rates), milestones = std::move(milestones)](double base, int64_t t) {
    const auto i = std::upper_bound(milestones.begin(), milestones.end(), t) - milestones.begin();
    const int64_t start = i == 0 ? 0 : milestones[static_cast<size_t>(i - 1)];
    return rates[static_cast<size_t>(i)](base, t - start);
  };
}

bool set_momentum(torch::optim::OptimizerOptions& options, double momentum) {
  if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    sgd->momentum(momentum);
  } else if (auto* rms = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
    rms->momentum(momentum);
  } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
    adam->betas({momentum, std::get<1>(adam->betas())});
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    adamw->betas({momentum, std::get<1>(adamw->betas())});
  } else {
    return false;
  }
  return true;
}

double momentum_of(const torch::optim::OptimizerOptions& options) {
  if (auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&options)) return sgd->momentum();
  if (auto* rms = dynamic_cast<const torch::optim::RMSpropOptions*>(&options)) {
    return rms->momentum();
  }
  if (auto* adam = dynamic_cast<const torch::optim::AdamOptions*>(&options)) {
    return std::get<0>(adam->betas());
  }
  if (auto* adamw = dynamic_cast<const torch::optim::AdamWOptions*>(&options)) {
    return std::get<0>(adamw->betas());
  }
  return std::numeric_limits<double>::quiet_NaN();
}

OneCycleLR::OneCycleLR(std::shared_ptr<torch::optim::Optimizer> optimizer, OneCycleOptions options,
                       StepMode mode)
    : Scheduler(std::move(optimizer), mode, "OneCycleLR"), options_(options) {
  const auto& o = options_;
  if (!(o.max_lr > 0)) throw core::UsageError("OneCycleLR: max_lr must be > 0");
  if (o.total_steps < 2) throw core::UsageError("OneCycleLR: total_steps must be >= 2");
  if (!(o.pct_start > 0 && o.pct_start < 1)) {
    throw core::UsageError("OneCycleLR: pct_start must be in (0, 1)");
  }
  const double initial = o.max_lr / o.div_factor, minimum = initial / o.final_div_factor;
  const double total = static_cast<double>(o.total_steps), pct = o.pct_start;
  if (o.three_phase) {
    phases_ = {{pct * total - 1, initial, o.max_lr, o.max_momentum, o.base_momentum},
               {2 * pct * total - 2, o.max_lr, initial, o.base_momentum, o.max_momentum},
               {total - 1, initial, minimum, o.max_momentum, o.max_momentum}};
  } else {
    phases_ = {{pct * total - 1, initial, o.max_lr, o.max_momentum, o.base_momentum},
               {total - 1, o.max_lr, minimum, o.base_momentum, o.max_momentum}};
  }
  if (o.cycle_momentum) {
    for (auto& group : optimizer_->param_groups()) {
      if (!set_momentum(group.options(), o.max_momentum)) {
        throw core::UsageError(
            "OneCycleLR: cycle_momentum needs an optimizer with momentum or betas (SGD, "
            "RMSprop, Adam, AdamW); set cycle_momentum = false");
      }
    }
  }
  apply();
}

void OneCycleLR::apply() {
  if (t_ > options_.total_steps) {
    throw core::UsageError("OneCycleLR: stepped " + std::to_string(t_) +
                           " times, but total_steps is " + std::to_string(options_.total_steps) +
                           "; set total_steps to the run's length in steps");
  }
  const double pi = std::acos(-1.0);
  auto anneal = [&](double start, double end, double pct) {
    return options_.cosine ? end + (start - end) / 2.0 * (std::cos(pi * pct) + 1)
                           : (end - start) * pct + start;
  };
  const double step = static_cast<double>(t_);
  double start_step = 0, lr = 0, momentum = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const auto& phase = phases_[i];
    if (step <= phase.end_step || i + 1 == phases_.size()) {
      const double pct = (step - start_step) / (phase.end_step - start_step);
      lr = anneal(phase.start_lr, phase.end_lr, pct);
      momentum = anneal(phase.start_momentum, phase.end_momentum, pct);
      break;
    }
    start_step = phase.end_step;
  }
  for (auto& group : optimizer_->param_groups()) {
    group.options().set_lr(lr);
    if (options_.cycle_momentum) set_momentum(group.options(), momentum);
  }
}

void OneCycleLR::step() {
  ++t_;
  apply();
}

void OneCycleLR::load_state(const std::map<std::string, double>& state) {
  auto it = state.find("steps");
  if (it != state.end()) t_ = static_cast<int64_t>(it->second);
  // the rates come back with the optimizer; momentum is an option libtorch does not restore
  if (options_.cycle_momentum) apply();
}

ReduceLROnPlateau::ReduceLROnPlateau(std::shared_ptr<torch::optim::Optimizer> optimizer,
                                     PlateauOptions options)
    : Scheduler(std::move(optimizer), StepMode::kEpoch, "ReduceLROnPlateau"),
      options_(std::move(options)),
      best_(options_.maximize ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity()) {
  if (!(options_.factor < 1 && options_.factor >= 0)) {
    throw core::UsageError("ReduceLROnPlateau: factor must be in [0, 1)");
  }
  if (options_.patience < 0 || options_.cooldown < 0) {
    throw core::UsageError("ReduceLROnPlateau: patience and cooldown must be >= 0");
  }
}

void ReduceLROnPlateau::step() {
  throw core::UsageError("ReduceLROnPlateau steps with a metric: scheduler:step(value)");
}

bool ReduceLROnPlateau::better(double value) const {
  const auto& o = options_;
  if (o.relative) {
    return o.maximize ? value > best_ * (1 + o.threshold) : value < best_ * (1 - o.threshold);
  }
  return o.maximize ? value > best_ + o.threshold : value < best_ - o.threshold;
}

void ReduceLROnPlateau::observe(double metric) {
  ++steps_;
  if (better(metric)) {
    best_ = metric;
    bad_ = 0;
  } else {
    ++bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_ = 0;
  }
  if (bad_ > options_.patience) {
    for (auto& group : optimizer_->param_groups()) {
      const double old_lr = group.options().get_lr();
      const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
      if (old_lr - new_lr > options_.eps) group.options().set_lr(new_lr);
    }
    cooldown_left_ = options_.cooldown;
    bad_ = 0;
  }
}

std::map<std::string, double> ReduceLROnPlateau::state() const {
  return {{"best", best_},
          {"bad_epochs", double(bad_)},
          {"cooldown_left", double(cooldown_left_)},
          {"steps", double(steps_)}};
}

void ReduceLROnPlateau::load_state(const std::map<std::string, double>& state) {
  auto get = [&](const char* key, double fallback) {
    auto it = state.find(key);
    return it == state.end() ? fallback : it->second;
  };
  best_ = get("best", best_);
  bad_ = static_cast<int64_t>(get("bad_epochs", 0));
  cooldown_left_ = static_cast<int64_t>(get("cooldown_left", 0));
  steps_ = static_cast<int64_t>(get("steps", 0));
}

double current_lr(const torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

}  // namespace engine::train
