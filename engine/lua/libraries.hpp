// The engine's Lua libraries, each opened by one wrap_*.cpp file and reached through require.
#pragma once

extern "C" {
#include <lua.h>
}

namespace engine::lua {

int open_torch(lua_State* L);  // require 'torch'   (torch/library.cpp)
// Adds torch.save and torch.load to the table on top of the stack (wrap_serialize.cpp).
void register_serialization(lua_State* L);
int open_nn_core(lua_State* L);  // require 'nn.core' (nn/library.cpp), extended by nn.lua
int open_optim(lua_State* L);    // require 'optim'   (optim/library.cpp)
int open_data(lua_State* L);     // require 'data'    (data/library.cpp)
int open_engine(lua_State* L);   // require 'engine'  (wrap_engine.cpp)

// Pushes the nn.F table (wrap_functional.cpp).
void push_functional(lua_State* L);
// Pushes the nn.init table (wrap_init.cpp).
void push_init(lua_State* L);

// Registers all of the above with package.preload, plus the embedded Lua libraries.
void register_libraries(lua_State* L);

}  // namespace engine::lua
