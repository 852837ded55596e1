// Optimizers and schedulers as Lua values.
#pragma once

#include <torch/optim/optimizer.h>

#include <functional>
#include <memory>
#include <string>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/train/scheduler.hpp"

namespace engine::lua {

struct OptimizerBox {
  static constexpr char kTypeName[] = "Optimizer";  // one address in every file: the tag
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string name;
  // opt:add_param_group{params = ..., option = value...}: the group table at the index given,
  // read with the optimizer's own option names, over its defaults
  std::function<void(lua_State* L, int group)> add_group;
};

struct SchedulerBox {
  static constexpr char kTypeName[] = "Scheduler";  // one address in every file: the tag
  std::shared_ptr<train::Scheduler> scheduler;
};

}  // namespace engine::lua
