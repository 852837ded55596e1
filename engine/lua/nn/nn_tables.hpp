// The function tables of require 'nn.core', one per file of this folder (layers, module methods
// and metamethods); library.cpp assembles them. Internal to engine/lua.
#pragma once

#include "engine/core/device.hpp"
#include "engine/core/format.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layers.hpp"
#include "engine/nn/sequential.hpp"

namespace engine::lua {

// nn.Linear, nn.Conv2d, ... nn.Sequential: the layers' constructors. (layers.cpp)
const Binding* layer_functions();
// A module's methods and metamethods. (module_methods.cpp)
const Binding* module_methods();
const luaL_Reg* module_metamethods();
// The module type's __index: its methods, then its children by name. (module_methods.cpp)
int module_index(lua_State* L);
// A built-in layer's attribute m.<key>: pushes it and returns true, or false when it has none;
// the error for a missing one lists the methods (the table at index `methods`) and the fields;
// the type's __newindex. (layer_fields.cpp)
bool push_layer_field(lua_State* L, torch::nn::Module& module, const std::string& key);
[[noreturn]] void throw_missing_layer_field(lua_State* L, torch::nn::Module& module,
                                            const std::string& key, int methods);
int module_newindex(lua_State* L);

}  // namespace engine::lua
