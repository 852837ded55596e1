// Part of require 'optim': the learning-rate schedulers (closed forms, LambdaLR, SequentialLR,
// OneCycleLR, ReduceLROnPlateau) and their methods (step, lr).
#include "engine/core/format.hpp"
#include "engine/core/numbers.hpp"
#include "engine/lua/optim/optim_tables.hpp"

namespace engine::lua {
namespace {

// Steps or epochs given as Lua numbers: whole numbers, or an error naming the option.
std::vector<int64_t> whole_numbers(const std::vector<double>& values, const std::string& what) {
  std::vector<int64_t> out;
  for (double v : values) {
    const auto whole = core::exact_int64(v);
    if (!whole)
      throw ArgumentError(what + ": whole numbers expected, got " + core::number_string(v));
    out.push_back(*whole);
  }
  return out;
}

int push_scheduler(lua_State* L, OptimizerBox& opt, train::Rate rate, const std::string& step_mode,
                   const char* name) {
  push_new<SchedulerBox>(
      L, SchedulerBox{std::make_shared<train::ClosedFormLR>(
             opt.optimizer, std::move(rate), train::parse_step_mode(step_mode), name)});
  return 1;
}

int o_step_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.StepLR");
    Options o(L, 2, "optim.StepLR", {"step_size", "gamma", "step_mode"});
    const int64_t step_size = o.integer("step_size", 0);
    if (step_size < 1)
      throw ArgumentError("optim.StepLR: option 'step_size' is required and must be >= 1");
    return push_scheduler(L, opt, train::step_rate(step_size, o.number("gamma", 0.1)),
                          o.string("step_mode", "epoch"), "StepLR");
  });
}

// optim.ExponentialLR(opt, {gamma = g, step_mode = 'epoch'})
int o_exponential_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.ExponentialLR");
    Options o(L, 2, "optim.ExponentialLR", {"gamma", "step_mode"});
    if (!o.has("gamma")) throw ArgumentError("optim.ExponentialLR: option 'gamma' is required");
    return push_scheduler(L, opt, train::exponential_rate(o.number("gamma", 1)),
                          o.string("step_mode", "epoch"), "ExponentialLR");
  });
}

// optim.MultiStepLR(opt, {milestones = {30, 80}, gamma = 0.1, step_mode = 'epoch'})
int o_multi_step_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.MultiStepLR");
    Options o(L, 2, "optim.MultiStepLR", {"milestones", "gamma", "step_mode"});
    if (!o.has("milestones"))
      throw ArgumentError("optim.MultiStepLR: option 'milestones' is required");
    const auto milestones =
        whole_numbers(o.numbers("milestones", {}), "optim.MultiStepLR: milestones");
    return push_scheduler(L, opt, train::multi_step_rate(milestones, o.number("gamma", 0.1)),
                          o.string("step_mode", "epoch"), "MultiStepLR");
  });
}

// optim.CosineAnnealingLR(opt, {T_max = n, eta_min = 0, step_mode = 'epoch'})
int o_cosine_annealing_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.CosineAnnealingLR");
    Options o(L, 2, "optim.CosineAnnealingLR", {"T_max", "eta_min", "step_mode"});
    if (!o.has("T_max")) throw ArgumentError("optim.CosineAnnealingLR: option 'T_max' is required");
    return push_scheduler(
        L, opt, train::cosine_annealing_rate(o.integer("T_max", 1), o.number("eta_min", 0)),
        o.string("step_mode", "epoch"), "CosineAnnealingLR");
  });
}

// optim.LinearLR(opt, {start_factor = 1/3, end_factor = 1, total_iters = 5, step_mode = 'epoch'})
int o_linear_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.LinearLR");
    Options o(L, 2, "optim.LinearLR", {"start_factor", "end_factor", "total_iters", "step_mode"});
    return push_scheduler(
        L, opt,
        train::linear_rate(o.number("start_factor", 1.0 / 3.0), o.number("end_factor", 1.0),
                           o.integer("total_iters", 5)),
        o.string("step_mode", "epoch"), "LinearLR");
  });
}

// optim.LambdaLR(opt, {lr_lambda = function(t) return factor end, step_mode = 'epoch'}) or
// optim.LambdaLR(opt, function(t) ... end): base rate times the function's value, computed
// once per step.
int o_lambda_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.LambdaLR");
    std::string mode = "epoch";
    if (lua_istable(L, 2)) {
      Options o(L, 2, "optim.LambdaLR", {"lr_lambda", "step_mode"});
      mode = o.string("step_mode", "epoch");
      raw_get(L, 2, "lr_lambda");
    } else {
      lua_pushvalue(L, 2);
    }
    if (!lua_isfunction(L, -1)) {
      throw ArgumentError("optim.LambdaLR: lr_lambda must be a function(step) returning a factor");
    }
    // The function stays referenced for the life of the Lua state: a scheduler may be stepped
    // by the trainer after every Lua value naming it is gone.
    const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    Runtime* runtime = &Runtime::from(L);
    auto factor = [runtime, ref](int64_t t) {
      lua_State* S = runtime->state();
      const int top = lua_gettop(S);
      lua_rawgeti(S, LUA_REGISTRYINDEX, ref);
      lua_pushnumber(S, static_cast<double>(t));
      runtime->call(1, 1);
      const bool number = lua_type(S, -1) == LUA_TNUMBER;
      const double value = number ? lua_tonumber(S, -1) : 0;
      lua_settop(S, top);
      if (!number) throw core::ScriptError("optim.LambdaLR: lr_lambda must return a number");
      return value;
    };
    return push_scheduler(L, opt, train::lambda_rate(factor), mode, "LambdaLR");
  });
}

// optim.SequentialLR(opt, {schedulers = {s1, s2, ...}, milestones = {m1, ...}}): s1 until step
// m1, then s2 restarted from its beginning, ... (closed-form schedulers only)
int o_sequential_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.SequentialLR");
    Options o(L, 2, "optim.SequentialLR", {"schedulers", "milestones", "step_mode"});
    const auto milestones =
        whole_numbers(o.numbers("milestones", {}), "optim.SequentialLR: milestones");
    o.push_field("schedulers");
    if (!lua_istable(L, -1)) {
      throw ArgumentError("optim.SequentialLR: schedulers must be a list of schedulers");
    }
    std::vector<train::Rate> rates;
    std::vector<double> bases;
    const int n = static_cast<int>(lua_objlen(L, -1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      auto* box = test<SchedulerBox>(L, -1);
      auto* closed = box ? dynamic_cast<train::ClosedFormLR*>(box->scheduler.get()) : nullptr;
      if (!closed) {
        throw ArgumentError("optim.SequentialLR: schedulers[" + std::to_string(i) +
                            "] must be StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, "
                            "LinearLR, LambdaLR or SequentialLR");
      }
      if (closed->optimizer() != opt.optimizer) {
        throw ArgumentError("optim.SequentialLR: schedulers[" + std::to_string(i) +
                            "] is built on another optimizer");
      }
      rates.push_back(closed->rate());
      if (i == 1) bases = closed->bases();  // the rates before any scheduler touched them
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    push_new<SchedulerBox>(
        L, SchedulerBox{std::make_shared<train::ClosedFormLR>(
               opt.optimizer, train::sequential_rate(std::move(rates), std::move(milestones)),
               train::parse_step_mode(o.string("step_mode", "epoch")), "SequentialLR", bases)});
    return 1;
  });
}

// optim.OneCycleLR(opt, {max_lr, total_steps, pct_start = 0.3, anneal_strategy = 'cos',
//   cycle_momentum = true, base_momentum = 0.85, max_momentum = 0.95, div_factor = 25,
//   final_div_factor = 1e4, three_phase = false, step_mode = 'step'})
int o_one_cycle_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.OneCycleLR");
    Options o(
        L, 2, "optim.OneCycleLR",
        {"max_lr", "total_steps", "pct_start", "anneal_strategy", "cycle_momentum", "base_momentum",
         "max_momentum", "div_factor", "final_div_factor", "three_phase", "step_mode"});
    if (!o.has("max_lr") || !o.has("total_steps")) {
      throw ArgumentError("optim.OneCycleLR: options 'max_lr' and 'total_steps' are required");
    }
    train::OneCycleOptions c;
    c.max_lr = o.number("max_lr", 0);
    c.total_steps = o.integer("total_steps", 0);
    c.pct_start = o.number("pct_start", 0.3);
    const std::string anneal = o.string("anneal_strategy", "cos");
    if (anneal != "cos" && anneal != "linear") {
      throw ArgumentError("optim.OneCycleLR: anneal_strategy must be 'cos' or 'linear'");
    }
    c.cosine = anneal == "cos";
    c.cycle_momentum = o.boolean("cycle_momentum", true);
    c.base_momentum = o.number("base_momentum", 0.85);
    c.max_momentum = o.number("max_momentum", 0.95);
    c.div_factor = o.number("div_factor", 25);
    c.final_div_factor = o.number("final_div_factor", 1e4);
    c.three_phase = o.boolean("three_phase", false);
    push_new<SchedulerBox>(
        L, SchedulerBox{std::make_shared<train::OneCycleLR>(
               opt.optimizer, c, train::parse_step_mode(o.string("step_mode", "step")))});
    return 1;
  });
}

// optim.ReduceLROnPlateau(opt, {metric = 'validation.loss', mode = 'min', factor = 0.1,
//   patience = 10, threshold = 1e-4, threshold_mode = 'rel', cooldown = 0, min_lr = 0,
//   eps = 1e-8}): the trainer feeds it the metric after every validation
int o_plateau(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.ReduceLROnPlateau");
    Options o(L, 2, "optim.ReduceLROnPlateau",
              {"metric", "mode", "factor", "patience", "threshold", "threshold_mode", "cooldown",
               "min_lr", "eps"});
    train::PlateauOptions p;
    const auto goal =
        train::parse_goal(o.string("metric", "validation.loss"), o.string("mode", ""));
    p.metric = goal.text();
    p.maximize = goal.maximize;
    p.factor = o.number("factor", 0.1);
    p.patience = o.integer("patience", 10);
    p.threshold = o.number("threshold", 1e-4);
    const std::string mode = o.string("threshold_mode", "rel");
    if (mode != "rel" && mode != "abs") {
      throw ArgumentError("optim.ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs'");
    }
    p.relative = mode == "rel";
    p.cooldown = o.integer("cooldown", 0);
    p.min_lr = o.number("min_lr", 0);
    p.eps = o.number("eps", 1e-8);
    push_new<SchedulerBox>(
        L, SchedulerBox{std::make_shared<train::ReduceLROnPlateau>(opt.optimizer, p)});
    return 1;
  });
}

// scheduler:step(), or scheduler:step(metric) for ReduceLROnPlateau
int sched_step(lua_State* L) {
  return guarded(L, [&] {
    auto& scheduler = *check<SchedulerBox>(L, 1, "step").scheduler;
    if (lua_type(L, 2) == LUA_TNUMBER && !scheduler.watched_metric().empty()) {
      scheduler.observe(lua_tonumber(L, 2));
    } else {
      scheduler.step();
    }
    return 0;
  });
}

int sched_lr(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, train::current_lr(*check<SchedulerBox>(L, 1, "lr").scheduler->optimizer()));
    return 1;
  });
}

const Binding kSchedulerFunctions[] = {{"StepLR", o_step_lr},
                                       {"ExponentialLR", o_exponential_lr},
                                       {"MultiStepLR", o_multi_step_lr},
                                       {"CosineAnnealingLR", o_cosine_annealing_lr},
                                       {"LinearLR", o_linear_lr},
                                       {"LambdaLR", o_lambda_lr},
                                       {"SequentialLR", o_sequential_lr},
                                       {"OneCycleLR", o_one_cycle_lr},
                                       {"ReduceLROnPlateau", o_plateau},
                                       {nullptr, nullptr}};
const Binding kSchedulerMethods[] = {{"step", sched_step}, {"lr", sched_lr}, {nullptr, nullptr}};

}  // namespace

const Binding* scheduler_functions() {
  return kSchedulerFunctions;
}
const Binding* scheduler_methods() {
  return kSchedulerMethods;
}

}  // namespace engine::lua
