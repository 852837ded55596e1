// The engine's Lua libraries, reached through require. Each library's table is made by its
// opener, then filled by its parts; engine/lua/runtime/libraries.cpp lists them in one table.
#pragma once

extern "C" {
#include <lua.h>
}

namespace engine::lua {

// Openers: each pushes its library's own table.
int open_torch(lua_State* L);    // require 'torch'   (torch/library.cpp)
int open_nn_core(lua_State* L);  // require 'nn.core' (nn/library.cpp), extended by nn/nn.lua
int open_optim(lua_State* L);    // require 'optim'   (optim/library.cpp)
int open_data(lua_State* L);     // require 'data'    (data/library.cpp)
int open_engine(lua_State* L);   // require 'engine'  (runtime/engine_library.cpp)
int open_search(lua_State* L);   // require 'search'  (search/library.cpp)

// Parts: each adds to the library table at index `library`.
void add_serialization(lua_State* L, int library);  // torch.save, torch.load (torch/serialize.cpp)
void add_memory_functions(lua_State* L,
                          int library);  // torch.scope, x:free()... (runtime/tensor_memory.cpp)
void add_functional(lua_State* L, int library);  // nn.F (nn/functional.cpp)
void add_init(lua_State* L, int library);        // nn.init (nn/init.cpp)
void add_utils(lua_State* L, int library);       // nn.utils (nn/utils.cpp)
void add_surface(lua_State* L, int library);     // engine.surface (surface/surface_library.cpp)

// Registers every library with package.preload, from the table in libraries.cpp.
void register_libraries(lua_State* L);

}  // namespace engine::lua
