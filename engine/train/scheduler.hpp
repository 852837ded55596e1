// A learning-rate scheduler bound to its optimizer, stepped per epoch or per step
// (Determined's step modes). Wraps libtorch's schedulers.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/optim/schedulers/lr_scheduler.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace engine::train {

enum class StepMode { kEpoch, kStep };
StepMode parse_step_mode(const std::string& name);

class Scheduler {
 public:
  Scheduler(std::shared_ptr<torch::optim::Optimizer> optimizer,
            std::unique_ptr<torch::optim::LRScheduler> scheduler, StepMode mode, std::string name);
  void step() { scheduler_->step(); }
  StepMode mode() const { return mode_; }
  const std::string& name() const { return name_; }
  const std::shared_ptr<torch::optim::Optimizer>& optimizer() const { return optimizer_; }

 private:
  std::shared_ptr<torch::optim::Optimizer> optimizer_;  // kept alive: libtorch holds a reference
  std::unique_ptr<torch::optim::LRScheduler> scheduler_;
  StepMode mode_;
  std::string name_;
};

// A schedule given in closed form: each group's rate after t steps is rate(base, t), base being
// its rate when the scheduler was made. ExponentialLR, MultiStepLR, CosineAnnealingLR and
// LinearLR, which libtorch 1.13 lacks, are such schedules.
class ClosedFormLR : public torch::optim::LRScheduler {
 public:
  using Rate = std::function<double(double base, unsigned t)>;
  ClosedFormLR(torch::optim::Optimizer& optimizer, Rate rate);

 protected:
  std::vector<double> get_lrs() override;

 private:
  std::vector<double> base_;
  Rate rate_;
};

// PyTorch's closed forms.
ClosedFormLR::Rate exponential_rate(double gamma);
ClosedFormLR::Rate multi_step_rate(std::vector<int64_t> milestones, double gamma);
ClosedFormLR::Rate cosine_annealing_rate(int64_t t_max, double eta_min);
ClosedFormLR::Rate linear_rate(double start_factor, double end_factor, int64_t total_iters);

// The learning rate of the optimizer's first parameter group.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace engine::train
