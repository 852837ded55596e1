#include "engine/lua/libraries.hpp"

#include <cstring>

#include "engine/lua/runtime.hpp"

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

}  // namespace

void register_libraries(lua_State* L) {
  preload(L, "torch", open_torch);
  preload(L, "nn.core", open_nn_core);
  preload(L, "nn", open_nn);
  preload(L, "optim", open_optim);
  preload(L, "data", open_data);
  preload(L, "engine", open_engine);
}

}  // namespace engine::lua
