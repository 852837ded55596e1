// Part of require 'torch'. Autograd: x:requires_grad, x:backward, torch.autograd.grad,
// torch.no_grad / enable_grad / inference_mode. Dimensions and index values are 1-based in Lua and
// converted here (LUA_API.md).
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/core/device.hpp"
#include "engine/lua/torch/torch_tables.hpp"
#include "engine/train/precision.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

// torch.autograd.grad{outputs = t or {...}, inputs = t or {...}[, grad_outputs][, retain_graph]
// [, create_graph]} -> one gradient per input (nil where an input is unused).
int t_autograd_grad(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "torch.autograd.grad",
              {"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph"});
    auto list_field = [&](const char* key) {
      lua_pushstring(L, key);
      lua_rawget(L, 1);
      std::vector<Tensor> out;
      if (auto* t = test_tensor(L, -1)) {
        out.push_back(*t);
      } else if (!lua_isnil(L, -1)) {
        try {
          out = tensor_list(L, lua_gettop(L), "torch.autograd.grad");
        } catch (...) {
          lua_pop(L, 1);
          throw;
        }
      }
      lua_pop(L, 1);
      return out;
    };
    auto outputs = list_field("outputs");
    auto inputs = list_field("inputs");
    auto grad_outputs = list_field("grad_outputs");
    if (outputs.empty() || inputs.empty()) {
      throw ArgumentError("torch.autograd.grad: 'outputs' and 'inputs' are required");
    }
    const bool create_graph = o.boolean("create_graph", false);
    auto grads = torch::autograd::grad(outputs, inputs, grad_outputs,
                                       o.boolean("retain_graph", create_graph), create_graph,
                                       /*allow_unused=*/true);
    for (auto& g : grads) {
      if (g.defined()) {
        push_tensor(L, g);
      } else {
        lua_pushnil(L);
      }
    }
    return static_cast<int>(grads.size());
  });
}

// torch.no_grad(fn, ...) / torch.enable_grad(fn, ...): run fn with gradient recording off / on.
template <bool Enabled>
int t_grad_mode(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const bool previous = at::GradMode::is_enabled();
  at::GradMode::set_enabled(Enabled);
  const int nargs = lua_gettop(L) - 1;
  const int status = lua_pcall(L, nargs, LUA_MULTRET, 0);
  at::GradMode::set_enabled(previous);
  if (status != 0) return lua_error(L);
  return lua_gettop(L);
}

// torch.set_grad_enabled(on): gradient recording on or off from here on, as PyTorch's call;
// torch.set_grad_enabled(on, fn, ...): only while fn runs, as its `with` form.
int t_set_grad_enabled(lua_State* L) {
  if (!lua_isboolean(L, 1)) {
    return luaL_error(L, "torch.set_grad_enabled: expected a boolean, got %s", luaL_typename(L, 1));
  }
  const bool on = lua_toboolean(L, 1) != 0;
  if (lua_isnoneornil(L, 2)) {
    at::GradMode::set_enabled(on);
    return 0;
  }
  luaL_checktype(L, 2, LUA_TFUNCTION);
  const bool previous = at::GradMode::is_enabled();
  at::GradMode::set_enabled(on);
  const int status = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
  at::GradMode::set_enabled(previous);
  if (status != 0) return lua_error(L);
  return lua_gettop(L) - 1;
}

// torch.autocast(device_type, fn, ...) or torch.autocast(device_type, {dtype = ...}, fn, ...):
// fn runs under autocast, PyTorch's `with torch.autocast(...)` (the trainer's precision option
// does this for a whole run); dtype defaults to bfloat16 on the CPU and float16 on CUDA.
int t_autocast(lua_State* L) {
  int status = 0;
  int base = 0;
  {
    std::string message;
    std::unique_ptr<train::AutocastScope> scope;
    try {
      const std::string device = check_string(L, 1, "torch.autocast");
      const torch::Device where = core::parse_device(device);
      int fn = 2;
      std::string dtype = where.is_cuda() ? "float16" : "bfloat16";
      if (lua_istable(L, 2)) {
        Options o(L, 2, "torch.autocast", {"dtype", "enabled"});
        dtype = o.string("dtype", dtype);
        if (!o.boolean("enabled", true)) dtype = "float32";
        fn = 3;
      }
      if (!lua_isfunction(L, fn)) {
        throw ArgumentError("torch.autocast(device_type[, {dtype}], fn, ...): fn is missing");
      }
      scope = std::make_unique<train::AutocastScope>(train::parse_precision(dtype), where);
      base = fn - 1;
    } catch (...) {
      message = current_exception_message(L);
    }
    if (!message.empty()) {
      luaL_where(L, 1);
      lua_pushlstring(L, message.data(), message.size());
      lua_concat(L, 2);
    } else {
      status = lua_pcall(L, lua_gettop(L) - base - 1, LUA_MULTRET, 0);
      if (status == 0) return lua_gettop(L) - base;  // the scope closes as this returns
    }
  }
  return lua_error(L);
}

// torch.is_grad_enabled()
int t_is_grad_enabled(lua_State* L) {
  lua_pushboolean(L, at::GradMode::is_enabled());
  return 1;
}

// torch.inference_mode(fn, ...): run fn under c10::InferenceMode (no autograd bookkeeping at
// all; its results cannot take part in autograd later), PyTorch's torch.inference_mode.
int t_inference_mode(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int status;
  {
    c10::InferenceMode guard;
    status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  }
  if (status != 0) return lua_error(L);
  return lua_gettop(L);
}

int m_requires_grad(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "requires_grad");
    const bool on = lua_isnoneornil(L, 2) ? true : lua_toboolean(L, 2) != 0;
    x.set_requires_grad(on);
    lua_settop(L, 1);
    return 1;
  });
}

// x:detach_(): x itself, taken out of the graph that made it (PyTorch's detach_).
int m_detach_(lua_State* L) {
  return guarded(L, [&] {
    self(L, "detach_").detach_();
    lua_settop(L, 1);
    return 1;
  });
}

int m_is_requires_grad(lua_State* L) {
  return guarded(L, [&] {
    lua_pushboolean(L, self(L, "is_requires_grad").requires_grad());
    return 1;
  });
}

int m_backward(lua_State* L) {
  return guarded(L, [&] {
    auto& x = self(L, "backward");
    if (auto* g = test_tensor(L, 2)) {
      x.backward(*g);
    } else {
      if (x.numel() != 1) {
        throw ArgumentError("backward: a tensor of " + std::to_string(x.numel()) +
                            " elements needs a gradient argument (backward(grad))");
      }
      x.backward();
    }
    return 0;
  });
}

const Binding kAutogradMethods[] = {{"requires_grad", m_requires_grad, "",
                                     "a method that sets the flag and returns x (PyTorch's "
                                     "attribute reads it: x:is_requires_grad())"},
                                    {"requires_grad_", m_requires_grad},
                                    {"detach_", m_detach_},
                                    {"is_requires_grad", m_is_requires_grad},
                                    {"backward", m_backward},
                                    {nullptr, nullptr}};
const luaL_Reg kAutogradMeta[] = {{nullptr, nullptr}};
const Binding kAutogradFunctions[] = {{"no_grad", t_grad_mode<false>},
                                      {"enable_grad", t_grad_mode<true>},
                                      {"inference_mode", t_inference_mode},
                                      {"set_grad_enabled", t_set_grad_enabled},
                                      {"autocast", t_autocast, "",
                                       "a function form: torch.autocast('cpu', {dtype = "
                                       "'bfloat16'}, fn, ...) runs fn under autocast"},
                                      {"is_grad_enabled", t_is_grad_enabled},
                                      {nullptr, nullptr}};

const Binding kAutograd[] = {{"grad", t_autograd_grad}, {nullptr, nullptr}};

}  // namespace

const Binding* autograd_functions() {
  return kAutograd;
}

TorchTables autograd_tables() {
  return {kAutogradMethods, kAutogradMeta, kAutogradFunctions};
}

}  // namespace engine::lua
