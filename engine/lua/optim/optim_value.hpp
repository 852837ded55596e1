// Optimizers and schedulers as Lua values.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <string>

#include "engine/train/scheduler.hpp"

namespace engine::lua {

struct OptimizerBox {
  static constexpr const char* kTypeName = "Optimizer";
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string name;
};

struct SchedulerBox {
  static constexpr const char* kTypeName = "Scheduler";
  std::shared_ptr<train::Scheduler> scheduler;
};

}  // namespace engine::lua
