// A torch::nn::Module whose forward is written in Lua: the C++ side of `nn.Module:extend`.
// Holds a registry reference to its Lua object; forward calls that object through the
// Runtime, so a Lua error comes back as a ScriptError with its traceback.
#pragma once

#include <torch/nn/module.h>

#include <string>

extern "C" {
#include <lua.h>
}

namespace engine::lua {

class LuaModuleImpl : public torch::nn::Module {
 public:
  LuaModuleImpl(lua_State* L, int object_ref, std::string class_name);
  torch::Tensor forward(torch::Tensor input);
  void pretty_print(std::ostream& stream) const override { stream << class_name_; }
  // Pushes the Lua object (the table users hold).
  void push_object(lua_State* L) const;
  const std::string& class_name() const { return class_name_; }

  using torch::nn::Module::register_buffer;
  using torch::nn::Module::register_module;
  using torch::nn::Module::register_parameter;

 private:
  lua_State* L_;
  int object_ref_;
  std::string class_name_;
};

}  // namespace engine::lua
