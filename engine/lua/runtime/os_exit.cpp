#include "engine/lua/runtime/os_exit.hpp"

#include <lua.hpp>

#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {
namespace {

int refused_exit(lua_State* L) {
  return luaL_error(L,
                    "os.exit would end the engine without closing what it writes (the run file "
                    "would stay 'running' and lose its last rows): end the script with "
                    "error('why') to stop it, or return");
}

int script_exit(lua_State* L) {
  int code = 0;
  if (lua_isboolean(L, 1)) {
    code = lua_toboolean(L, 1) ? 0 : 1;
  } else if (!lua_isnoneornil(L, 1)) {
    code = static_cast<int>(luaL_checkinteger(L, 1));
  }
  Runtime::from(L).request_exit(code);
  return luaL_error(L, "os.exit(%d)", code);  // unwinds to Runtime::call, which ends the script
}

}  // namespace

void install_os_exit(lua_State* L, bool may_exit) {
  lua_getglobal(L, "os");
  lua_pushcfunction(L, may_exit ? script_exit : refused_exit);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
}

}  // namespace engine::lua
