// Part of require 'optim': the optimizers (libtorch's, the engine's fused SGD and Adadelta), their
// parameter groups and options, and their methods (step, zero_grad, lr, momentum, set_lr).
#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/lbfgs.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/optim/optim_tables.hpp"
#include "engine/nn/parameter_slots.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/adam.hpp"
#include "engine/train/optimizer_archive.hpp"
#include "engine/train/sgd.hpp"

namespace engine::lua {
namespace {

// Parameters from a Lua list of tensors, or from a module.
std::vector<torch::Tensor> parameter_list(lua_State* L, int index, const std::string& function) {
  if (auto* module = test_module(L, index)) return nn::unique_parameters(*module->module());
  return tensor_list(L, index, function.c_str());
}

void check_positive(double v, const std::string& function, const char* what) {
  if (!(v >= 0)) throw ArgumentError(function + ": " + what + " must be >= 0");
}

// Whether the first argument is a list of parameter groups {{params = ..., lr = ...}, ...}
// rather than a list of tensors or a module.
bool is_group_list(lua_State* L, int index) {
  if (!lua_istable(L, index) || test_module(L, index)) return false;
  lua_rawgeti(L, index, 1);
  bool groups = false;
  if (lua_istable(L, -1) && !test_module(L, -1)) {
    raw_get(L, -1, "params");
    groups = !lua_isnil(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return groups;
}

// Builds any optimizer the same way: options at argument 2 over the optimizer's defaults;
// argument 1 a module, a list of tensors, or parameter groups whose own options override
// argument 2's for their parameters (PyTorch's per-parameter options).
//   read(Options&, const Opts& fallback) -> Opts
// One parameter group from its table at `entry` ({params = ..., option = value...}), its options
// over `defaults`; `where` names it in errors.
template <class Opts, class Read>
torch::optim::OptimizerParamGroup read_group(lua_State* L, int entry, const std::string& where,
                                             std::vector<const char*> keys, const Opts& defaults,
                                             const Read& read) {
  if (!lua_istable(L, entry) || test_module(L, entry)) {
    throw ArgumentError(where + ": expected a table {params = ..., options...}");
  }
  keys.push_back("params");
  Options g(L, entry, where, keys);
  raw_get(L, entry, "params");
  auto params = parameter_list(L, lua_gettop(L), where + " params");
  lua_pop(L, 1);
  return {std::move(params), std::make_unique<Opts>(read(g, defaults))};
}

template <class Optimizer, class Opts, class Read>
int build_optimizer(lua_State* L, const std::string& name, const char* short_name,
                    std::vector<const char*> keys, const Opts& base, Read read) {
  Options o(L, 2, name, keys);
  const Opts defaults = read(o, base);
  std::shared_ptr<Optimizer> optimizer;
  if (is_group_list(L, 1)) {
    std::vector<torch::optim::OptimizerParamGroup> groups;
    const int n = static_cast<int>(lua_objlen(L, 1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, 1, i);
      groups.push_back(
          read_group(L, lua_gettop(L), name + " group " + std::to_string(i), keys, defaults, read));
      lua_pop(L, 1);
    }
    optimizer = std::make_shared<Optimizer>(std::move(groups), defaults);
  } else {
    optimizer = std::make_shared<Optimizer>(parameter_list(L, 1, name), defaults);
  }
  auto add_group = [optimizer, name, keys, read](lua_State* S, int entry) {
    const auto& own = static_cast<const Opts&>(optimizer->defaults());
    optimizer->add_param_group(read_group(S, entry, name + ":add_param_group", keys, own, read));
  };
  push_new<OptimizerBox>(L, OptimizerBox{optimizer, short_name, add_group});
  return 1;
}

int o_sgd(lua_State* L) {
  return guarded(L, [&] {
    if (!is_group_list(L, 1)) {
      Options o(L, 2, "optim.SGD", {"lr", "momentum", "dampening", "weight_decay", "nesterov"});
      if (!o.has("lr")) throw ArgumentError("optim.SGD: option 'lr' is required");
    }
    return build_optimizer<train::FusedSGD>(
        L, "optim.SGD", "SGD", {"lr", "momentum", "dampening", "weight_decay", "nesterov"},
        torch::optim::SGDOptions(0), [](const Options& o, const torch::optim::SGDOptions& d) {
          torch::optim::SGDOptions opts(o.number("lr", d.lr()));
          opts.momentum(o.number("momentum", d.momentum()))
              .dampening(o.number("dampening", d.dampening()))
              .weight_decay(o.number("weight_decay", d.weight_decay()))
              .nesterov(o.boolean("nesterov", d.nesterov()));
          check_positive(opts.lr(), "optim.SGD", "lr");
          return opts;
        });
  });
}

int o_adadelta(lua_State* L) {
  return guarded(L, [&] {
    return build_optimizer<train::Adadelta>(
        L, "optim.Adadelta", "Adadelta", {"lr", "rho", "eps", "weight_decay"},
        train::AdadeltaOptions(1.0), [](const Options& o, const train::AdadeltaOptions& d) {
          train::AdadeltaOptions opts(o.number("lr", d.lr()));
          opts.rho(o.number("rho", d.rho()))
              .eps(o.number("eps", d.eps()))
              .weight_decay(o.number("weight_decay", d.weight_decay()));
          return opts;
        });
  });
}

template <class Optimizer, class Opts>
int adam_like(lua_State* L, const char* name, const char* short_name, double default_decay) {
  return guarded(L, [&] {
    Opts base(1e-3);
    base.weight_decay(default_decay);
    return build_optimizer<Optimizer>(
        L, name, short_name, {"lr", "betas", "eps", "weight_decay", "amsgrad"}, base,
        [name](const Options& o, const Opts& d) {
          auto betas = o.numbers("betas", {std::get<0>(d.betas()), std::get<1>(d.betas())});
          if (betas.size() != 2)
            throw ArgumentError(std::string(name) + ": betas must be a pair of numbers");
          Opts opts(o.number("lr", d.lr()));
          opts.betas({betas[0], betas[1]})
              .eps(o.number("eps", d.eps()))
              .weight_decay(o.number("weight_decay", d.weight_decay()))
              .amsgrad(o.boolean("amsgrad", d.amsgrad()));
          check_positive(opts.lr(), name, "lr");
          return opts;
        });
  });
}

int o_adam(lua_State* L) {
  return adam_like<train::FusedAdam, torch::optim::AdamOptions>(L, "optim.Adam", "Adam", 0);
}
int o_adamw(lua_State* L) {
  return adam_like<train::FusedAdamW, torch::optim::AdamWOptions>(L, "optim.AdamW", "AdamW", 1e-2);
}

// optim.Adagrad(params, {lr = 0.01, lr_decay = 0, weight_decay = 0,
//                        initial_accumulator_value = 0, eps = 1e-10}): libtorch's, as PyTorch's
int o_adagrad(lua_State* L) {
  return guarded(L, [&] {
    return build_optimizer<torch::optim::Adagrad>(
        L, "optim.Adagrad", "Adagrad",
        {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"},
        torch::optim::AdagradOptions(1e-2),
        [](const Options& o, const torch::optim::AdagradOptions& d) {
          torch::optim::AdagradOptions opts(o.number("lr", d.lr()));
          opts.lr_decay(o.number("lr_decay", d.lr_decay()))
              .weight_decay(o.number("weight_decay", d.weight_decay()))
              .initial_accumulator_value(
                  o.number("initial_accumulator_value", d.initial_accumulator_value()))
              .eps(o.number("eps", d.eps()));
          check_positive(opts.lr(), "optim.Adagrad", "lr");
          check_positive(opts.lr_decay(), "optim.Adagrad", "lr_decay");
          check_positive(opts.initial_accumulator_value(), "optim.Adagrad",
                         "initial_accumulator_value");
          return opts;
        });
  });
}

// optim.RMSprop(params, {lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0,
//                        centered = false}): libtorch's, as PyTorch's
int o_rmsprop(lua_State* L) {
  return guarded(L, [&] {
    return build_optimizer<torch::optim::RMSprop>(
        L, "optim.RMSprop", "RMSprop",
        {"lr", "alpha", "eps", "weight_decay", "momentum", "centered"},
        torch::optim::RMSpropOptions(1e-2),
        [](const Options& o, const torch::optim::RMSpropOptions& d) {
          torch::optim::RMSpropOptions opts(o.number("lr", d.lr()));
          opts.alpha(o.number("alpha", d.alpha()))
              .eps(o.number("eps", d.eps()))
              .weight_decay(o.number("weight_decay", d.weight_decay()))
              .momentum(o.number("momentum", d.momentum()))
              .centered(o.boolean("centered", d.centered()));
          check_positive(opts.lr(), "optim.RMSprop", "lr");
          check_positive(opts.alpha(), "optim.RMSprop", "alpha");
          check_positive(opts.momentum(), "optim.RMSprop", "momentum");
          return opts;
        });
  });
}

// optim.LBFGS(params, {lr = 1, max_iter = 20, max_eval = max_iter * 5 / 4,
//   tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100,
//   line_search_fn = 'strong_wolfe' | nil}): libtorch's; its step re-evaluates the loss, so
//   opt:step(function() ... return loss end) from Lua; the trainer does this by itself
int o_lbfgs(lua_State* L) {
  return guarded(L, [&] {
    return build_optimizer<torch::optim::LBFGS>(
        L, "optim.LBFGS", "LBFGS",
        {"lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size",
         "line_search_fn"},
        torch::optim::LBFGSOptions(1), [](const Options& o, const torch::optim::LBFGSOptions& d) {
          torch::optim::LBFGSOptions opts(o.number("lr", d.lr()));
          opts.max_iter(o.integer("max_iter", d.max_iter()))
              .tolerance_grad(o.number("tolerance_grad", d.tolerance_grad()))
              .tolerance_change(o.number("tolerance_change", d.tolerance_change()))
              .history_size(o.integer("history_size", d.history_size()));
          if (o.has("max_eval"))
            opts.max_eval(o.integer("max_eval", 0));
          else if (d.max_eval())
            opts.max_eval(d.max_eval());
          else
            opts.max_eval(opts.max_iter() * 5 / 4);
          if (o.has("line_search_fn")) {
            const std::string fn = o.string("line_search_fn", "");
            if (fn != "strong_wolfe") {
              throw ArgumentError("optim.LBFGS: line_search_fn must be 'strong_wolfe' or nil");
            }
            opts.line_search_fn(fn);
          } else {
            opts.line_search_fn(d.line_search_fn());
          }
          check_positive(opts.lr(), "optim.LBFGS", "lr");
          if (opts.max_iter() < 1 || opts.history_size() < 1)
            throw ArgumentError("optim.LBFGS: max_iter and history_size must be >= 1");
          return opts;
        });
  });
}

// opt:step(), or opt:step(closure) where closure() recomputes and returns the loss after
// zeroing the gradients and calling backward (LBFGS needs it; it returns the first loss)
int opt_step(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "step");
    if (!lua_isfunction(L, 2)) {
      if (opt.name == "LBFGS") {
        throw ArgumentError("LBFGS:step needs a closure: opt:step(function() ... return loss end)");
      }
      opt.optimizer->step();
      return 0;
    }
    Runtime* runtime = &Runtime::from(L);
    lua_pushvalue(L, 2);
    const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    struct Unref {
      lua_State* L;
      int ref;
      ~Unref() { luaL_unref(L, LUA_REGISTRYINDEX, ref); }
    } unref{L, ref};
    auto loss = opt.optimizer->step([runtime, ref]() -> torch::Tensor {
      lua_State* S = runtime->state();
      const int top = lua_gettop(S);
      lua_rawgeti(S, LUA_REGISTRYINDEX, ref);
      runtime->call(0, 1);
      auto* t = test_tensor(S, -1);
      if (!t) {
        lua_settop(S, top);
        throw ArgumentError("step: the closure must return the loss tensor");
      }
      torch::Tensor out = *t;
      lua_settop(S, top);
      return out;
    });
    if (loss.defined()) {
      push_tensor(L, loss);
    } else {
      lua_pushnil(L);
    }
    return 1;
  });
}

// opt:zero_grad([set_to_none]): as PyTorch 2, gradients are released (nil) unless
// set_to_none is false, which fills them with zeros.
int opt_zero_grad(lua_State* L) {
  return guarded(L, [&] {
    auto& optimizer = *check<OptimizerBox>(L, 1, "zero_grad").optimizer;
    if (!lua_isnoneornil(L, 2) && !lua_isboolean(L, 2)) {
      throw ArgumentError("opt:zero_grad: set_to_none must be a boolean, got " +
                          std::string(luaL_typename(L, 2)));
    }
    if (lua_isnoneornil(L, 2) || lua_toboolean(L, 2)) {
      train::release_gradients(optimizer);
    } else {
      train::zero_gradients(optimizer);
    }
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

// opt:add_param_group{params = ..., lr = ...}: PyTorch's; the group's options over the
// optimizer's own (a fine-tuned model's unfrozen layers added with a rate of their own)
int opt_add_param_group(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "add_param_group");
    opt.add_group(L, 2);
    return 0;
  });
}

// opt:state_dict(): a table torch.save takes and opt:load_state_dict reads back: each group's
// rate and parameter count, and the optimizer's state as libtorch's own archive (bytes), which is
// what the engine's checkpoints keep too
int opt_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "state_dict");
    auto archive = train::optimizer_archive(*opt.optimizer);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, opt.name.c_str());
    lua_setfield(L, -2, "type");
    push_tensor(L, std::move(archive));
    lua_setfield(L, -2, "archive");
    const auto& groups = opt.optimizer->param_groups();
    lua_createtable(L, static_cast<int>(groups.size()), 0);
    for (size_t i = 0; i < groups.size(); ++i) {
      lua_createtable(L, 0, 2);
      lua_pushnumber(L, groups[i].options().get_lr());
      lua_setfield(L, -2, "lr");
      lua_pushnumber(L, static_cast<double>(groups[i].params().size()));
      lua_setfield(L, -2, "parameters");
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_setfield(L, -2, "param_groups");
    return 1;
  });
}

int opt_load_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto& opt = check<OptimizerBox>(L, 1, "load_state_dict");
    if (!lua_istable(L, 2)) throw ArgumentError("load_state_dict: expected what state_dict gave");
    raw_get(L, 2, "type");
    const std::string type = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (type != opt.name) {
      throw ArgumentError("load_state_dict: the state is of " +
                          (type.empty() ? std::string("no optimizer") : type) + ", this is " +
                          opt.name);
    }
    raw_get(L, 2, "archive");
    auto* archive = test_tensor(L, -1);
    lua_pop(L, 1);  // the table at 2 keeps the tensor alive
    if (!archive) throw ArgumentError("load_state_dict: the state has no archive tensor");
    train::load_optimizer_archive(*opt.optimizer, *archive);
    raw_get(L, 2, "param_groups");
    auto& groups = opt.optimizer->param_groups();
    if (!lua_istable(L, -1) || lua_objlen(L, -1) != groups.size()) {
      throw ArgumentError("load_state_dict: the state has " +
                          std::to_string(lua_istable(L, -1) ? lua_objlen(L, -1) : 0) +
                          " parameter groups, the optimizer " + std::to_string(groups.size()));
    }
    for (size_t i = 0; i < groups.size(); ++i) {
      lua_rawgeti(L, -1, static_cast<int>(i + 1));
      raw_get(L, -1, "lr");
      groups[i].options().set_lr(lua_tonumber(L, -1));
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
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

const Binding kOptimizerFunctions[] = {
    {"SGD", o_sgd},         {"Adadelta", o_adadelta}, {"Adam", o_adam},   {"AdamW", o_adamw},
    {"Adagrad", o_adagrad}, {"RMSprop", o_rmsprop},   {"LBFGS", o_lbfgs}, {nullptr, nullptr}};
const Binding kOptimizerMethods[] = {{"add_param_group", opt_add_param_group},
                                     {"state_dict", opt_state_dict, "",
                                      "a table of each group's rate and libtorch's archive of the "
                                      "state (bytes), for opt:load_state_dict and torch.save"},
                                     {"load_state_dict", opt_load_state_dict},
                                     {"step", opt_step},
                                     {"zero_grad", opt_zero_grad},
                                     {"lr", opt_lr},
                                     {"momentum", opt_momentum},
                                     {"set_lr", opt_set_lr},
                                     {nullptr, nullptr}};
const luaL_Reg kOptimizerMeta[] = {{"__tostring", opt_tostring}, {nullptr, nullptr}};

}  // namespace

const Binding* optimizer_functions() {
  return kOptimizerFunctions;
}
const Binding* optimizer_methods() {
  return kOptimizerMethods;
}
const luaL_Reg* optimizer_metamethods() {
  return kOptimizerMeta;
}

}  // namespace engine::lua
