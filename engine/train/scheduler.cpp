#include "engine/train/scheduler.hpp"

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

double current_lr(const torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

}  // namespace engine::train
