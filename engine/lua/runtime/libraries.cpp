#include "engine/lua/runtime/libraries.hpp"

#include <cstring>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/surface/missing_names.hpp"

namespace engine::lua {
namespace {

// require 'nn': the embedded nn.lua, under a chunk name that tracebacks show.
int open_nn(lua_State* L) {
  const char* source = embedded_lua("nn.lua");
  if (!source || luaL_loadbuffer(L, source, std::strlen(source), "=[engine nn.lua]") != 0) {
    return luaL_error(L, "the engine's nn.lua is missing or broken: %s", lua_tostring(L, -1));
  }
  lua_call(L, 0, 1);
  return 1;
}

using Part = void (*)(lua_State* L, int library);

struct Library {
  const char* name;    // what require takes
  lua_CFunction open;  // pushes the library's table
  Part parts[3];       // then fill it, in order (nullptr ends the list)
};

// Every library the engine gives scripts: a new one is one row here.
const Library kLibraries[] = {
    {"torch", open_torch, {add_memory_functions, add_serialization, nullptr}},
    {"nn.core", open_nn_core, {add_functional, add_init, add_utils}},
    {"nn", open_nn, {nullptr}},
    {"optim", open_optim, {nullptr}},
    {"data", open_data, {nullptr}},
    {"engine", open_engine, {add_surface, nullptr}},
    {"search", open_search, {nullptr}},
};

// package.preload's loader for kLibraries[upvalue 1].
int open_library(lua_State* L) {
  const auto& library = kLibraries[static_cast<size_t>(lua_tointeger(L, lua_upvalueindex(1)))];
  lua_settop(L, 0);
  if (library.open(L) != 1) return luaL_error(L, "library '%s' pushed no table", library.name);
  const int table = lua_gettop(L);
  for (Part part : library.parts) {
    if (!part) break;
    part(L, table);
  }
  lua_settop(L, table);
  // a name the library lacks is an error naming it, never a nil (nn.core is nn.lua's own)
  if (std::strcmp(library.name, "nn.core") != 0) guard_library(L, table, library.name);
  return 1;
}

}  // namespace

void register_libraries(lua_State* L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  for (size_t i = 0; i < sizeof kLibraries / sizeof kLibraries[0]; ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(i));
    lua_pushcclosure(L, open_library, 1);
    lua_setfield(L, -2, kLibraries[i].name);
  }
  lua_pop(L, 2);
}

}  // namespace engine::lua
