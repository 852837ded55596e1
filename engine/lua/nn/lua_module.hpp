// A torch::nn::Module whose forward is written in Lua: the C++ side of `nn.Module:extend`.
// Holds a registry reference to its Lua object; forward calls that object through the
// Runtime, so a Lua error comes back as a ScriptError with its traceback.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <map>
#include <string>

#include "engine/nn/layer_error.hpp"

extern "C" {
#include <lua.h>
}

namespace engine::lua {

// A layer called from Lua (net.fc(x)) that rejected its input: the error named by the layer's
// place under the Lua module whose forward is running ("head.1"), and kept so that this
// module's forward can raise it again as a LayerError once it has crossed Lua, for the modules
// above to add their names.
nn::LayerError layer_error_from_lua(const nn::LayerError& error, const torch::nn::Module& layer);

class LuaModuleImpl : public torch::nn::Module {
 public:
  LuaModuleImpl(lua_State* L, int object_ref, std::string class_name);
  torch::Tensor forward(torch::Tensor input);
  // forward with one table of named inputs ({input = ..., categorical = ..., text = ...}), as
  // the trainer calls a model whose batches hold several inputs.
  torch::Tensor forward_inputs(const std::map<std::string, torch::Tensor>& inputs);
  void pretty_print(std::ostream& stream) const override { stream << class_name_; }
  // Pushes the Lua object (the table users hold).
  void push_object(lua_State* L) const;
  const std::string& class_name() const { return class_name_; }
  // "model.lua:12: ", where the object's forward is written ("" when it is not Lua's)
  std::string forward_location() const;

  using torch::nn::Module::register_buffer;
  using torch::nn::Module::register_module;
  using torch::nn::Module::register_parameter;

 private:
  // Calls the object with what `push_argument` pushes; its Tensor result.
  torch::Tensor call_forward(const std::function<void()>& push_argument);

  lua_State* L_;
  int object_ref_;
  std::string class_name_;
};

}  // namespace engine::lua
