#include "engine/lua/script/train_hooks.hpp"

#include <set>

#include "engine/core/format.hpp"
#include "engine/lua/data/data_value.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/train/step_context.hpp"

namespace engine::lua {
namespace {

constexpr const char* kTrainerKey = "__trainer";

const std::set<std::string> kCallbacks = {"on_epoch_start", "on_epoch_end", "on_validation_end",
                                          "on_checkpoint"};

// Points ctx at the trainer for one hook call and unhooks it afterwards, however the call ends:
// a ctx kept by the script past the call must not reach a trainer that no longer exists.
class ContextScope {
 public:
  ContextScope(lua_State* L, int ctx_ref) : L_(L), ref_(ctx_ref) {}
  ~ContextScope() {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    lua_pushstring(L_, "__trainer");
    lua_pushnil(L_);
    lua_rawset(L_, -3);
    lua_pop(L_, 1);
  }

 private:
  lua_State* L_;
  int ref_;
};

train::StepContext& context(lua_State* L, const char* method) {
  if (!lua_istable(L, 1)) {
    throw ArgumentError(std::string("ctx:") + method +
                        " is a method: call it with ':' (ctx:" + method + "(...))");
  }
  lua_pushstring(L, kTrainerKey);
  lua_rawget(L, 1);
  auto* ctx = static_cast<train::StepContext*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (!ctx) {
    throw ArgumentError(std::string("ctx:") + method +
                        ": ctx is only usable while the trainer runs a hook or callback");
  }
  return *ctx;
}

// A number, or a tensor of one element, as a double.
bool to_number(lua_State* L, int index, double* out) {
  if (lua_type(L, index) == LUA_TNUMBER) {
    *out = lua_tonumber(L, index);
    return true;
  }
  if (auto* t = test_tensor(L, index)) {
    if (t->numel() != 1) return false;
    *out = t->detach().to(torch::kCPU, torch::kFloat64).item<double>();
    return true;
  }
  return false;
}

int ctx_backward(lua_State* L) {
  return guarded(L, [&] {
    auto& ctx = context(L, "backward");
    lua_pushboolean(L, ctx.backward(check_tensor(L, 2, "ctx:backward")));
    return 1;
  });
}

// ctx:step(), or ctx:step(name) for one of several optimizers
int ctx_step(lua_State* L) {
  return guarded(L, [&] {
    auto& ctx = context(L, "step");
    if (lua_isnoneornil(L, 2)) {
      lua_pushboolean(L, ctx.step());
    } else {
      lua_pushboolean(L, ctx.step(check_string(L, 2, "ctx:step")));
    }
    return 1;
  });
}

int ctx_log(lua_State* L) {
  return guarded(L, [&] {
    auto& ctx = context(L, "log");
    if (!lua_istable(L, 2)) throw ArgumentError("ctx:log expects a table {name = number, ...}");
    std::map<std::string, double> values;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      double v = 0;
      if (lua_type(L, -2) != LUA_TSTRING || !to_number(L, -1, &v)) {
        lua_pop(L, 2);
        throw ArgumentError("ctx:log: every entry must be name = number (or a one-element tensor)");
      }
      values[lua_tostring(L, -2)] = v;
      lua_pop(L, 1);
    }
    ctx.log(values);
    return 0;
  });
}

int ctx_stop(lua_State* L) {
  return guarded(L, [&] {
    auto& ctx = context(L, "stop");
    std::string reason;
    if (lua_type(L, 2) == LUA_TSTRING) reason = lua_tostring(L, 2);
    ctx.stop(reason);
    return 0;
  });
}

// ctx.loss while a hook runs on a batch without a target (engine predict's input, a pipeline
// without labels): given no target it gives nil, so that the evaluate_batch docs/training.md
// shows, {loss = ctx.loss(out, batch.target), output = out}, works unchanged; given a target, it
// is the script's loss (upvalue 1).
int targetless_loss(lua_State* L) {
  if (lua_isnoneornil(L, 2)) return 0;  // ctx.loss(out, target): no target
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Puts targetless_loss in ctx.loss for the scope of one hook call, and the script's loss back.
class TargetlessLoss {
 public:
  TargetlessLoss(lua_State* L, int ctx_ref, bool active) : L_(L), ctx_ref_(ctx_ref) {
    if (!active) return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref);
    lua_getfield(L, -1, "loss");
    if (lua_isnil(L, -1)) {
      lua_pop(L, 2);
      return;
    }
    lua_pushvalue(L, -1);
    saved_ = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushcclosure(L, targetless_loss, 1);
    lua_setfield(L, -2, "loss");
    lua_pop(L, 1);
  }
  ~TargetlessLoss() {
    if (saved_ == LUA_NOREF) return;
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ctx_ref_);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, saved_);
    lua_setfield(L_, -2, "loss");
    lua_pop(L_, 1);
    luaL_unref(L_, LUA_REGISTRYINDEX, saved_);
  }
  TargetlessLoss(const TargetlessLoss&) = delete;
  TargetlessLoss& operator=(const TargetlessLoss&) = delete;

 private:
  lua_State* L_;
  int ctx_ref_;
  int saved_ = LUA_NOREF;
};

void push_values(lua_State* L, const std::map<std::string, double>& values) {
  lua_createtable(L, 0, static_cast<int>(values.size()));
  for (const auto& [name, value] : values) {
    lua_pushnumber(L, value);
    lua_setfield(L, -2, name.c_str());
  }
}

}  // namespace

LuaHooks::LuaHooks(Runtime& runtime, std::string script_path)
    : runtime_(runtime), path_(std::move(script_path)) {
  lua_State* L = runtime_.state();
  lua_newtable(L);
  static const Binding methods[] = {{"backward", ctx_backward},
                                    {"step", ctx_step},
                                    {"log", ctx_log},
                                    {"stop", ctx_stop},
                                    {nullptr, nullptr}};
  set_bindings(L, methods);
  ctx_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

LuaHooks::~LuaHooks() {
  lua_State* L = runtime_.state();
  luaL_unref(L, LUA_REGISTRYINDEX, ctx_ref_);
  for (int ref : refs_) luaL_unref(L, LUA_REGISTRYINDEX, ref);
}

int LuaHooks::keep(int index) {
  lua_State* L = runtime_.state();
  lua_pushvalue(L, index);
  refs_.push_back(luaL_ref(L, LUA_REGISTRYINDEX));
  return refs_.back();
}

void LuaHooks::set_ctx_field(const char* name, int index) {
  lua_State* L = runtime_.state();
  index = absolute_index(L, index);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref_);
  lua_pushvalue(L, index);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

void LuaHooks::push_ctx_field(const char* name) {
  lua_State* L = runtime_.state();
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref_);
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
}

void LuaHooks::enter(train::StepContext& ctx) {
  lua_State* L = runtime_.state();
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref_);
  lua_pushstring(L, kTrainerKey);
  lua_pushlightuserdata(L, &ctx);
  lua_rawset(L, -3);
  lua_pushnumber(L, static_cast<double>(ctx.epoch()));
  lua_setfield(L, -2, "epoch");
  lua_pushnumber(L, static_cast<double>(ctx.step_index()));
  lua_setfield(L, -2, "step_index");
  lua_pushboolean(L, ctx.training());
  lua_setfield(L, -2, "training");
}

train::BatchResult LuaHooks::call_batch_hook(int ref, const char* name, train::StepContext& ctx,
                                             const data::Batch& batch) {
  lua_State* L = runtime_.state();
  StackGuard restore(L);
  ContextScope scope(L, ctx_ref_);
  const TargetlessLoss targetless(L, ctx_ref_, !batch.target.defined() && !ctx.training());
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  enter(ctx);  // pushes ctx
  push_batch(L, batch);
  lua_getfield(L, -2, "hp");
  runtime_.call(3, 1);
  train::BatchResult result;
  const int r = lua_gettop(L);
  double v = 0;
  if (to_number(L, r, &v)) {
    result.values["loss"] = v;
  } else if (lua_istable(L, r)) {
    lua_pushnil(L);
    while (lua_next(L, r) != 0) {
      const std::string key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      if (key == "output") {
        auto* t = test_tensor(L, -1);
        if (!t) {
          throw core::ScriptError(path_ + ": " + name + " returned 'output' as a " +
                                  type_name(L, -1) + "; it must be the model's output tensor");
        }
        result.output = *t;
      } else if (to_number(L, -1, &v)) {
        result.values[key] = v;
      } else {
        throw core::ScriptError(path_ + ": " + name + " returned '" + key + "' as a " +
                                type_name(L, -1) +
                                "; values must be numbers or one-element tensors");
      }
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, r)) {
    throw core::ScriptError(path_ + ": " + name + " must return a table such as {loss = loss}, " +
                            "got " + type_name(L, r));
  }
  if (ctx.training() && !result.values.count("loss")) {
    throw core::ScriptError(path_ + ": " + name +
                            " must return a table with 'loss' ({loss = loss})");
  }
  return result;
}

void LuaHooks::call_callback(int ref, train::StepContext& ctx,
                             const std::map<std::string, double>* values, const std::string* path) {
  lua_State* L = runtime_.state();
  StackGuard restore(L);
  ContextScope scope(L, ctx_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  enter(ctx);
  int nargs = 1;
  if (values) {
    push_values(L, *values);
    ++nargs;
  }
  if (path) {
    lua_pushstring(L, path->c_str());
    ++nargs;
  }
  runtime_.call(nargs, 0);
}

void LuaHooks::install(int spec, train::TrainSpec& out) {
  lua_State* L = runtime_.state();
  StackGuard restore(L);
  spec = absolute_index(L, spec);
  for (const char* hook : {"train_batch", "evaluate_batch"}) {
    raw_get(L, spec, hook);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    if (!lua_isfunction(L, -1)) {
      throw core::ScriptError(path_ + ": '" + hook + "' must be a function(ctx, batch, hp) (got " +
                              type_name(L, -1) + ")");
    }
    const int ref = keep(-1);
    lua_pop(L, 1);
    auto fn = [this, ref, hook](train::StepContext& ctx, const data::Batch& batch) {
      return call_batch_hook(ref, hook, ctx, batch);
    };
    (hook[0] == 't' ? out.hooks.train_batch : out.hooks.evaluate_batch) = fn;
  }
  raw_get(L, spec, "callbacks");
  if (lua_isnil(L, -1)) return;
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ +
                            ": 'callbacks' must be a table {on_epoch_end = function..} (got " +
                            type_name(L, -1) + ")");
  }
  const int table = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    const std::string key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (!kCallbacks.count(key)) {
      throw core::ScriptError(
          path_ + ": unknown callback '" + key + "' (known: " +
          core::join(std::vector<std::string>(kCallbacks.begin(), kCallbacks.end())) + ")");
    }
    if (!lua_isfunction(L, -1)) {
      throw core::ScriptError(path_ + ": callbacks." + key + " must be a function (got " +
                              type_name(L, -1) + ")");
    }
    const int ref = keep(-1);
    lua_pop(L, 1);
    if (key == "on_epoch_start") {
      out.hooks.on_epoch_start = [this, ref](train::StepContext& ctx) {
        call_callback(ref, ctx, nullptr, nullptr);
      };
    } else if (key == "on_checkpoint") {
      out.hooks.on_checkpoint = [this, ref](train::StepContext& ctx, const std::string& path) {
        call_callback(ref, ctx, nullptr, &path);
      };
    } else {
      auto fn = [this, ref](train::StepContext& ctx, const std::map<std::string, double>& values) {
        call_callback(ref, ctx, &values, nullptr);
      };
      (key == "on_epoch_end" ? out.hooks.on_epoch_end : out.hooks.on_validation_end) = fn;
    }
  }
}

train::CustomMetric LuaHooks::metric(const std::string& name, int index) {
  const int ref = keep(index);
  return train::CustomMetric{
      name, [this, ref, name](const torch::Tensor& output, const torch::Tensor& target) {
        lua_State* L = runtime_.state();
        StackGuard restore(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
        push_tensor(L, output);
        push_tensor(L, nn::one_based_classes(target));
        runtime_.call(2, 1);
        double v = 0;
        if (!to_number(L, -1, &v)) {
          throw core::ScriptError(path_ + ": metric '" + name + "' must return a number (got " +
                                  type_name(L, -1) + ")");
        }
        return v;
      }};
}

}  // namespace engine::lua
