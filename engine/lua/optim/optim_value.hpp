// Optimizers and schedulers as Lua values.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <string>

#include "engine/train/scheduler.hpp"

namespace engine::lua {

struct OptimizerBox {
  static constexpr char kTypeName[] = "Optimizer";  // one address in every file: the tag
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string name;
};

struct SchedulerBox {
  static constexpr char kTypeName[] = "Scheduler";  // one address in every file: the tag
  std::shared_ptr<train::Scheduler> scheduler;
};

}  // namespace engine::lua
