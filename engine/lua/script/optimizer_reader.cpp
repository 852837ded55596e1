// A training script's optimizer and scheduler (train_script_reader.cpp reads the rest):
// optimizer(params, hp, model) returns one optimizer, or a table of them by name (a GAN's
// generator and discriminator), and scheduler(optimizer, hp) returns one scheduler, or a table of
// them by the optimizers' names, each built on the optimizer of its name.
#include "engine/core/metric_names.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/optim/optim_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_hooks.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/parameter_slots.hpp"

namespace engine::lua {

// optimizer(params, hp, model), left on the stack for the scheduler
void TrainScript::read_optimizer(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  auto params = nn::unique_parameters(*spec.model.module);  // a tied weight once, as PyTorch
  lua_createtable(L, static_cast<int>(params.size()), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    push_parameter(L, params[i]);
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  push_hparams();
  hooks_->push_ctx_field("model");
  call_field("optimizer", 3);
  if (auto* optimizer = test<OptimizerBox>(L, -1)) {
    spec.optimizer = optimizer->optimizer;
    spec.optimizer_name = optimizer->name;
    hooks_->set_ctx_field("optimizer", -1);
    return;
  }
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ +
                            ": 'optimizer' must be a function(params, hp, model) returning an "
                            "optimizer, or a table of them by name (got " +
                            type_name(L, -1) + ")");
  }
  read_named_optimizers(lua_gettop(L), spec);
  hooks_->set_ctx_field("optimizers", -1);
}

void TrainScript::read_named_optimizers(int table, train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      throw core::ScriptError(path_ +
                              ": 'optimizer' returned a table whose keys must be the optimizers' "
                              "names ({generator = optim.Adam(...), ...}), got a " +
                              type_name(L, -2) + " key");
    }
    const std::string name = lua_tostring(L, -2);
    auto* optimizer = test<OptimizerBox>(L, -1);
    if (!optimizer) {
      throw core::ScriptError(path_ +
                              ": 'optimizer' must be a function(params, hp, model) returning an "
                              "optimizer, or a table of them by name (got a table whose '" +
                              name + "' is a " + type_name(L, -1) + ")");
    }
    try {
      core::check_path_name("optimizer name", name);  // its rate is the column lr_<name>
    } catch (const core::UsageError& e) {
      throw core::ScriptError(path_ + ": 'optimizer': " + e.what());
    }
    spec.optimizers.push_back({name, optimizer->optimizer, optimizer->name, nullptr});
    lua_pop(L, 1);
  }
  if (spec.optimizers.empty()) {
    throw core::ScriptError(path_ + ": 'optimizer' returned an empty table");
  }
  std::sort(spec.optimizers.begin(), spec.optimizers.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  spec.optimizer = spec.optimizers.front().optimizer;
  spec.optimizer_name = spec.optimizers.front().type;
}

// scheduler(optimizer, hp), optional; the optimizer (or the table of them) is on top of the stack
void TrainScript::read_scheduler(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  push_field("scheduler");
  const bool has_scheduler = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!has_scheduler) return;
  lua_pushvalue(L, -1);
  push_hparams();
  call_field("scheduler", 2);
  const bool several = !spec.optimizers.empty();
  auto* scheduler = test<SchedulerBox>(L, -1);
  if (several && scheduler) {
    throw core::ScriptError(path_ +
                            ": with several optimizers 'scheduler' returns a table of schedulers "
                            "by the optimizers' names ({generator = optim.StepLR(opts.generator, "
                            "...)})");
  }
  if (several && lua_istable(L, -1)) {
    read_named_schedulers(lua_gettop(L), spec);
    hooks_->set_ctx_field("schedulers", -1);
  } else if (!scheduler && !lua_isnil(L, -1)) {  // nil: no schedule for these hyperparameters
    throw core::ScriptError(
        path_ + ": 'scheduler' must be a function(optimizer, hp) returning a scheduler (got " +
        type_name(L, -1) + ")");
  } else if (scheduler) {
    if (scheduler->scheduler->optimizer() != spec.optimizer) {
      throw core::ScriptError(path_ + ": the scheduler must be built on the optimizer it is given");
    }
    spec.scheduler = scheduler->scheduler;
    hooks_->set_ctx_field("scheduler", -1);
  }
  lua_pop(L, 1);
}

void TrainScript::read_named_schedulers(int table, train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    const std::string name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    auto named = std::find_if(spec.optimizers.begin(), spec.optimizers.end(),
                              [&](const train::NamedOptimizer& o) { return o.name == name; });
    if (named == spec.optimizers.end()) {
      std::string names;
      for (const auto& o : spec.optimizers) names += (names.empty() ? "" : ", ") + o.name;
      throw core::ScriptError(path_ + ": 'scheduler' returned '" + name +
                              "', which names no optimizer (the script's: " + names + ")");
    }
    auto* scheduler = test<SchedulerBox>(L, -1);
    if (!scheduler) {
      throw core::ScriptError(path_ + ": 'scheduler' returned '" + name + "' as a " +
                              type_name(L, -1) + ", not a scheduler");
    }
    if (scheduler->scheduler->optimizer() != named->optimizer) {
      throw core::ScriptError(path_ + ": the scheduler '" + name +
                              "' must be built on the optimizer of that name");
    }
    named->scheduler = scheduler->scheduler;
    lua_pop(L, 1);
  }
}

}  // namespace engine::lua
