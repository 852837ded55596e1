// The function tables of require 'nn.core', one per file of this folder (layers, module methods
// and metamethods); library.cpp assembles them. Internal to engine/lua.
#pragma once

#include <optional>

#include "engine/core/device.hpp"
#include "engine/core/format.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layers.hpp"
#include "engine/nn/sequential.hpp"

namespace engine::lua {

// Pushes a new layer of type Impl built from args; returns 1 (a binding's result count).
template <class Impl, class... Args>
int push_layer(lua_State* L, Args&&... args) {
  push_module(L, torch::nn::AnyModule(std::make_shared<Impl>(std::forward<Args>(args)...)));
  return 1;
}

// A 1-based dimension given at construction, before the input rank is known.
inline int64_t layer_dim(int64_t user_dim, const char* function) {
  if (user_dim == 0) {
    throw ArgumentError(std::string(function) +
                        ": dimension 0 does not exist (dimensions are 1-based; -1 is the last)");
  }
  return user_dim > 0 ? user_dim - 1 : user_dim;
}

// nn.Linear, nn.Conv2d, ... nn.Sequential: the layers' constructors (layers.cpp); activations
// (activation_layers.cpp); recurrent cells and nn.RNN (recurrent_layers.cpp); layers that change
// sizes: transposed convolutions, pixel shuffles, upsampling, padding, instance norm
// (resize_layers.cpp).
const Binding* layer_functions();
const Binding* activation_layer_functions();
const Binding* recurrent_layer_functions();
const Binding* resize_layer_functions();
const Binding* transformer_layer_functions();  // transformer_layers.cpp, with the next two
int forward_transformer(lua_State* L, torch::nn::Module* module);
int push_square_subsequent_mask_function(lua_State* L);
// forward of a recurrent cell or nn.RNN called from Lua, which take and return states; -1 for
// another layer (recurrent_layers.cpp)
int forward_recurrent(lua_State* L, torch::nn::Module* module);
// A module's methods and metamethods. (module_methods.cpp)
const Binding* module_methods();
const luaL_Reg* module_metamethods();
// The module type's __index: its methods, then its children by name. (module_methods.cpp)
int module_index(lua_State* L);
// A built-in layer's attribute m.<key>: pushes it and returns true, or false when it has none;
// the error for a missing one lists the methods (the table at index `methods`) and the fields;
// the type's __newindex. (layer_fields.cpp)
bool push_layer_field(lua_State* L, torch::nn::Module& module, const std::string& key);
// A child of a built-in layer as a value Lua can call (TransformerEncoderLayer's self_attn,
// linear1, norm1, dropout; a Transformer's encoder): the layer types libtorch builds inside its
// own; nothing for the others (a ModuleList).
std::optional<torch::nn::AnyModule> callable_child(const std::shared_ptr<torch::nn::Module>& m);
[[noreturn]] void throw_missing_layer_field(lua_State* L, torch::nn::Module& module,
                                            const std::string& key, int methods);
int module_newindex(lua_State* L);

}  // namespace engine::lua
