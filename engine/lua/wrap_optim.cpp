// require 'optim': libtorch's optimizers (plus Adadelta) and learning-rate schedulers.
#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "engine/lua/libraries.hpp"
#include "engine/lua/module_value.hpp"
#include "engine/lua/optim_value.hpp"
#include "engine/lua/tensor_value.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/spec.hpp"

namespace engine::lua {
namespace {

// Parameters from a Lua list of tensors, or from a module.
std::vector<torch::Tensor> parameter_list(lua_State* L, int index, const char* function) {
  if (auto* module = test_module(L, index)) return module->module()->parameters();
  return tensor_list(L, index, function);
}

void check_positive(double v, const char* function, const char* what) {
  if (!(v >= 0)) throw ArgumentError(std::string(function) + ": " + what + " must be >= 0");
}

int o_sgd(lua_State* L) {
  return guarded(L, [&] {
    auto params = parameter_list(L, 1, "optim.SGD");
    Options o(L, 2, "optim.SGD", {"lr", "momentum", "dampening", "weight_decay", "nesterov"});
    if (!o.has("lr")) throw ArgumentError("optim.SGD: option 'lr' is required");
    torch::optim::SGDOptions opts(o.number("lr", 0));
    opts.momentum(o.number("momentum", 0))
        .dampening(o.number("dampening", 0))
        .weight_decay(o.number("weight_decay", 0))
        .nesterov(o.boolean("nesterov", false));
    check_positive(opts.lr(), "optim.SGD", "lr");
    push_new<OptimizerBox>(L,
                           OptimizerBox{std::make_shared<torch::optim::SGD>(params, opts), "SGD"});
    return 1;
  });
}

int o_adadelta(lua_State* L) {
  return guarded(L, [&] {
    auto params = parameter_list(L, 1, "optim.Adadelta");
    Options o(L, 2, "optim.Adadelta", {"lr", "rho", "eps", "weight_decay"});
    train::AdadeltaOptions opts(o.number("lr", 1.0));
    opts.rho(o.number("rho", 0.9))
        .eps(o.number("eps", 1e-6))
        .weight_decay(o.number("weight_decay", 0));
    push_new<OptimizerBox>(
        L, OptimizerBox{std::make_shared<train::Adadelta>(params, opts), "Adadelta"});
    return 1;
  });
}

template <class Optimizer, class Opts>
int adam_like(lua_State* L, const char* name, const char* short_name, double default_decay) {
  return guarded(L, [&] {
    auto params = parameter_list(L, 1, name);
    Options o(L, 2, name, {"lr", "betas", "eps", "weight_decay", "amsgrad"});
    auto betas = o.numbers("betas", {0.9, 0.999});
    if (betas.size() != 2)
      throw ArgumentError(std::string(name) + ": betas must be a pair of numbers");
    Opts opts(o.number("lr", 1e-3));
    opts.betas({betas[0], betas[1]})
        .eps(o.number("eps", 1e-8))
        .weight_decay(o.number("weight_decay", default_decay))
        .amsgrad(o.boolean("amsgrad", false));
    check_positive(opts.lr(), name, "lr");
    push_new<OptimizerBox>(L, OptimizerBox{std::make_shared<Optimizer>(params, opts), short_name});
    return 1;
  });
}

int o_adam(lua_State* L) {
  return adam_like<torch::optim::Adam, torch::optim::AdamOptions>(L, "optim.Adam", "Adam", 0);
}
int o_adamw(lua_State* L) {
  return adam_like<torch::optim::AdamW, torch::optim::AdamWOptions>(L, "optim.AdamW", "AdamW",
                                                                    1e-2);
}

// optim.Adagrad(params, {lr = 0.01, lr_decay = 0, weight_decay = 0,
//                        initial_accumulator_value = 0, eps = 1e-10}): libtorch's, as PyTorch's
int o_adagrad(lua_State* L) {
  return guarded(L, [&] {
    auto params = parameter_list(L, 1, "optim.Adagrad");
    Options o(L, 2, "optim.Adagrad",
              {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"});
    torch::optim::AdagradOptions opts(o.number("lr", 1e-2));
    opts.lr_decay(o.number("lr_decay", 0))
        .weight_decay(o.number("weight_decay", 0))
        .initial_accumulator_value(o.number("initial_accumulator_value", 0))
        .eps(o.number("eps", 1e-10));
    check_positive(opts.lr(), "optim.Adagrad", "lr");
    check_positive(opts.lr_decay(), "optim.Adagrad", "lr_decay");
    check_positive(opts.initial_accumulator_value(), "optim.Adagrad", "initial_accumulator_value");
    push_new<OptimizerBox>(
        L, OptimizerBox{std::make_shared<torch::optim::Adagrad>(params, opts), "Adagrad"});
    return 1;
  });
}

// optim.RMSprop(params, {lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0,
//                        centered = false}): libtorch's, as PyTorch's
int o_rmsprop(lua_State* L) {
  return guarded(L, [&] {
    auto params = parameter_list(L, 1, "optim.RMSprop");
    Options o(L, 2, "optim.RMSprop",
              {"lr", "alpha", "eps", "weight_decay", "momentum", "centered"});
    torch::optim::RMSpropOptions opts(o.number("lr", 1e-2));
    opts.alpha(o.number("alpha", 0.99))
        .eps(o.number("eps", 1e-8))
        .weight_decay(o.number("weight_decay", 0))
        .momentum(o.number("momentum", 0))
        .centered(o.boolean("centered", false));
    check_positive(opts.lr(), "optim.RMSprop", "lr");
    check_positive(opts.alpha(), "optim.RMSprop", "alpha");
    check_positive(opts.momentum(), "optim.RMSprop", "momentum");
    push_new<OptimizerBox>(
        L, OptimizerBox{std::make_shared<torch::optim::RMSprop>(params, opts), "RMSprop"});
    return 1;
  });
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
    return push_scheduler(
        L, opt,
        train::step_rate(step_size, o.number("gamma", 0.1)),
        o.string("step_mode", "epoch"), "StepLR");
  });
}

// optim.ExponentialLR(opt, {gamma = g, step_mode = 'epoch'})
int o_exponential_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.ExponentialLR");
    Options o(L, 2, "optim.ExponentialLR", {"gamma", "step_mode"});
    if (!o.has("gamma")) throw ArgumentError("optim.ExponentialLR: option 'gamma' is required");
    return push_scheduler(L, opt,
                          train::exponential_rate(o.number("gamma", 1)),
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
    std::vector<int64_t> milestones;
    for (double m : o.numbers("milestones", {})) milestones.push_back(static_cast<int64_t>(m));
    return push_scheduler(
        L, opt,
        train::multi_step_rate(milestones, o.number("gamma", 0.1)),
        o.string("step_mode", "epoch"), "MultiStepLR");
  });
}

// optim.CosineAnnealingLR(opt, {T_max = n, eta_min = 0, step_mode = 'epoch'})
int o_cosine_annealing_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "optim.CosineAnnealingLR");
    Options o(L, 2, "optim.CosineAnnealingLR", {"T_max", "eta_min", "step_mode"});
    if (!o.has("T_max")) throw ArgumentError("optim.CosineAnnealingLR: option 'T_max' is required");
    return push_scheduler(L, opt,
                          train::cosine_annealing_rate(o.integer("T_max", 1),
                                                                           o.number("eta_min", 0)),
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
      lua_getfield(L, 2, "lr_lambda");
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
    std::vector<int64_t> milestones;
    for (double m : o.numbers("milestones", {})) milestones.push_back(static_cast<int64_t>(m));
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
    Options o(L, 2, "optim.OneCycleLR",
              {"max_lr", "total_steps", "pct_start", "anneal_strategy", "cycle_momentum",
               "base_momentum", "max_momentum", "div_factor", "final_div_factor", "three_phase",
               "step_mode"});
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
    push_new<SchedulerBox>(L, SchedulerBox{std::make_shared<train::OneCycleLR>(
                                  opt.optimizer, c,
                                  train::parse_step_mode(o.string("step_mode", "step")))});
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
    const auto goal = train::parse_goal(o.string("metric", "validation.loss"), o.string("mode", ""));
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

int opt_step(lua_State* L) {
  return guarded(L, [&] {
    check<OptimizerBox>(L, 1, "step").optimizer->step();
    return 0;
  });
}

int opt_zero_grad(lua_State* L) {
  return guarded(L, [&] {
    check<OptimizerBox>(L, 1, "zero_grad").optimizer->zero_grad();
    return 0;
  });
}

int opt_lr(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, train::current_lr(*check<OptimizerBox>(L, 1, "lr").optimizer));
    return 1;
  });
}

// opt:momentum(): SGD's or RMSprop's momentum, Adam's beta1 (first group); nil when none
int opt_momentum(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "momentum");
    const auto& groups = opt.optimizer->param_groups();
    const double m = groups.empty() ? std::nan("") : train::momentum_of(groups.front().options());
    if (std::isnan(m)) {
      lua_pushnil(L);
    } else {
      lua_pushnumber(L, m);
    }
    return 1;
  });
}

int opt_set_lr(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "set_lr");
    const double lr = check_number(L, 2, "set_lr");
    for (auto& group : opt.optimizer->param_groups()) group.options().set_lr(lr);
    return 0;
  });
}

int opt_tostring(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "tostring");
    const std::string s =
        "optim." + opt.name + "(lr=" + std::to_string(train::current_lr(*opt.optimizer)) + ")";
    lua_pushstring(L, s.c_str());
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

const luaL_Reg kOptimizerMethods[] = {{"step", opt_step},
                                      {"zero_grad", opt_zero_grad},
                                      {"lr", opt_lr},
                                      {"momentum", opt_momentum},
                                      {"set_lr", opt_set_lr},
                                      {nullptr, nullptr}};
const luaL_Reg kOptimizerMeta[] = {{"__tostring", opt_tostring}, {nullptr, nullptr}};
const luaL_Reg kSchedulerMethods[] = {{"step", sched_step}, {"lr", sched_lr}, {nullptr, nullptr}};
const luaL_Reg kFunctions[] = {{"SGD", o_sgd},
                               {"Adadelta", o_adadelta},
                               {"Adam", o_adam},
                               {"AdamW", o_adamw},
                               {"Adagrad", o_adagrad},
                               {"RMSprop", o_rmsprop},
                               {"StepLR", o_step_lr},
                               {"ExponentialLR", o_exponential_lr},
                               {"MultiStepLR", o_multi_step_lr},
                               {"CosineAnnealingLR", o_cosine_annealing_lr},
                               {"LinearLR", o_linear_lr},
                               {"LambdaLR", o_lambda_lr},
                               {"SequentialLR", o_sequential_lr},
                               {"OneCycleLR", o_one_cycle_lr},
                               {"ReduceLROnPlateau", o_plateau},
                               {nullptr, nullptr}};

}  // namespace

int open_optim(lua_State* L) {
  require_library(L, "torch");
  define_type(L, OptimizerBox::kTypeName, kOptimizerMethods, kOptimizerMeta,
              gc_userdata<OptimizerBox>);
  define_type(L, SchedulerBox::kTypeName, kSchedulerMethods, nullptr, gc_userdata<SchedulerBox>);
  lua_newtable(L);
  luaL_setfuncs(L, kFunctions, 0);
  return 1;
}

}  // namespace engine::lua
