// Modules as Lua values. Built-in layers are userdata holding the libtorch module; modules
// written in Lua are tables (see nn.lua) whose `__cpp` field holds such a userdata wrapping a
// LuaModule. Both reach C++ as a ModuleBox.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include <memory>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/model.hpp"

namespace engine::lua {

struct ModuleBox {
  static constexpr char kTypeName[] = "Module";  // one address in every file: the tag
  torch::nn::AnyModule any;                      // forward(Tensor) -> Tensor, type-erased
  // Whether forward takes or returns several tensors (LSTM, attention, ...): found on the first
  // call from Lua, so later calls skip the type tests. -1: not known yet.
  int8_t several_tensors = -1;
  std::shared_ptr<torch::nn::Module> module() const { return any.ptr(); }
};

struct LossBox {
  static constexpr char kTypeName[] = "Loss";  // one address in every file: the tag
  std::shared_ptr<nn::Loss> loss;
};

// Pushes a parameter tensor marked as one (nn.Parameter's mark), so that assigning it to a
// field of a Lua module registers it there, as assigning a Parameter does in PyTorch.
void push_parameter(lua_State* L, const torch::Tensor& parameter);
// Pushes the weak-keyed table of those marks (made once per Lua state), which nn.lua's
// nn.Parameter shares.
void push_parameter_marks(lua_State* L);

// Pushes a module: the Lua object of a Lua-defined module, a new userdata otherwise.
void push_module(lua_State* L, const torch::nn::AnyModule& module);
// A built-in module userdata or a Lua-defined module object; nullptr for anything else.
ModuleBox* test_module(lua_State* L, int index);
ModuleBox& check_module(lua_State* L, int index, const char* function);

// A loss from its options table at index ({reduction = ...}, plus label_smoothing for
// cross-entropy); unknown keys are errors naming `function`.
std::shared_ptr<nn::Loss> loss_from_options(lua_State* L, int index, nn::Loss::Kind kind,
                                            const char* function);

// The model the trainer runs, from a module value.
nn::Model model_from(const ModuleBox& box);

}  // namespace engine::lua
