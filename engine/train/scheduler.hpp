// A learning-rate scheduler bound to its optimizer, stepped per epoch or per step
// (Determined's step modes). Wraps libtorch's schedulers.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/optim/schedulers/lr_scheduler.h>

#include <memory>
#include <string>

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

// The learning rate of the optimizer's first parameter group.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace engine::train
