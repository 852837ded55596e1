// A torch::nn::Module whose forward is written in Lua: the C++ side of `nn.Module:extend`.
// Finds its Lua object through a weak table; forward calls that object through the Runtime, so
// a Lua error comes back as a ScriptError with its traceback.
//
// Who keeps whom: the object holds its box (the `__cpp` field), the box holds this module. Lua's
// collector frees the two once no script reaches the object and nothing in C++ holds the module
// (a strong registry reference, as before, kept every model a state ever built). C++ takes the
// module only from its box, found by test_module, which pins the object (a strong reference);
// before and after each collection, and after a module box with children is freed, a sweep
// unpins the objects whose module only their box still holds (a parent's, a C++ container's or
// the trainer's hold keeps it pinned). collectgarbage() repeats collections while sweeps let go
// of holds C++ had (runtime/tensor_memory.hpp, full_collection), so that a dropped model is
// freed at once.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

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
// L: the state the layer was called in; when no forward the engine called is running (a Lua
// module called from Lua: net(x) in a hook or engine run), the Lua module is the calling frame's
// `self`, and the error is named under it and located at that frame's line.
nn::LayerError layer_error_from_lua(const nn::LayerError& error, const torch::nn::Module& layer,
                                    lua_State* L = nullptr);

// core.forward_call(object, ...): object:forward(...), the __call of every class nn.lua makes,
// with the module counted as running forward, so that a layer its forward tail-calls
// (`return self.head(x)`, which leaves no Lua frame) is still named under it and located where
// forward is written.
int forward_call(lua_State* L);

class LuaModuleImpl : public torch::nn::Module {
 public:
  // The object at index is the table nn.lua made for this module.
  LuaModuleImpl(lua_State* L, int object_index, std::string class_name);
  torch::Tensor forward(torch::Tensor input);
  // forward with one table of named inputs ({input = ..., categorical = ..., text = ...}), as
  // the trainer calls a model whose batches hold several inputs.
  torch::Tensor forward_inputs(const std::map<std::string, torch::Tensor>& inputs);
  void pretty_print(std::ostream& stream) const override { stream << class_name_; }
  // Pushes the Lua object (the table users hold).
  void push_object(lua_State* L) const;
  // Keeps the object alive until a sweep finds that only its box holds this module.
  void pin(lua_State* L);
  const std::string& class_name() const { return class_name_; }
  // "model.lua:12: ", where the object's forward is written ("" when it is not Lua's)
  std::string forward_location() const;
  // A full collection of the Lua state this module lives in (nn::Model::collect_garbage).
  void collect_garbage() const;

  using torch::nn::Module::register_buffer;
  using torch::nn::Module::register_module;
  using torch::nn::Module::register_parameter;

 private:
  // Calls the object with what `push_argument` pushes; its Tensor result.
  torch::Tensor call_forward(const std::function<void()>& push_argument);

  friend void sweep_pins(lua_State* L);

  lua_State* L_;
  std::string class_name_;
  bool pinned_ = false;
  bool held_ = false;  // something besides its box held it when a sweep last looked
};

// Starts the sweep that runs after every collection of L (once per Lua state, by nn.core).
void start_pin_sweeps(lua_State* L);
// The sweep: unpins the objects whose module only their box holds.
void sweep_pins(lua_State* L);
// The Lua-defined module an AnyModule holds, or nullptr.
LuaModuleImpl* lua_module_in(torch::nn::AnyModule& any);
// The finalizer of module boxes (nn.core's Module type): a module with children sweeps after it
// lets go of them, so that a nest of modules is freed one level per collection.
int module_box_gc(lua_State* L);

}  // namespace engine::lua
