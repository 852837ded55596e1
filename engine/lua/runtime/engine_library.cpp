// require 'engine': versions, logging, and what a checkpoint says of its run, for scripts.
#include <ATen/Parallel.h>

#include <chrono>

#include "engine/core/log.hpp"
#include "engine/core/threads.hpp"
#include "engine/core/version.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/train/checkpoint.hpp"

namespace engine::lua {
namespace {

// Joins the arguments with tostring, as print does, on the Lua stack (no C++ object is alive
// while tostring may raise), then logs the result.
template <core::log::Level Level>
int log(lua_State* L) {
  const int n = lua_gettop(L);
  lua_getglobal(L, "tostring");
  const int tostring_index = n + 1;
  for (int i = 1; i <= n; ++i) {
    if (i > 1) lua_pushliteral(L, " ");
    lua_pushvalue(L, tostring_index);
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
  }
  lua_concat(L, n == 0 ? 0 : 2 * n - 1);
  const char* message = lua_tostring(L, -1);
  return guarded(L, [&] {
    core::log::write(Level, "{}", fmt::make_format_args(message ? message : ""));
    return 0;
  });
}

// engine.clock(): seconds on a monotonic wall clock, for timing steps (os.clock counts CPU
// time of all threads, os.time has 1 s resolution).
int e_clock(lua_State* L) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(now).count());
  return 1;
}

int e_threads(lua_State* L) {
  lua_pushnumber(L, at::get_num_threads());
  return 1;
}

// engine.checkpoint(path) -> {name, step, seed, run_file, hparams = {...}}: what a checkpoint of
// engine train says of its run, for a script that rebuilds the model from it (generation,
// export). The weights are torch.load(path).model.
int e_checkpoint(lua_State* L) {
  return guarded(L, [&] {
    const auto info = train::read_checkpoint_info(check_string(L, 1, "engine.checkpoint"));
    lua_createtable(L, 0, 5);
    lua_pushstring(L, info.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, static_cast<lua_Number>(info.step));
    lua_setfield(L, -2, "step");
    lua_pushnumber(L, static_cast<lua_Number>(info.seed));
    lua_setfield(L, -2, "seed");
    lua_pushstring(L, info.run_file.c_str());
    lua_setfield(L, -2, "run_file");
    lua_createtable(L, 0, static_cast<int>(info.hparams.size()));
    for (const auto& [key, value] : info.hparams) {
      push_hparam(L, value);
      lua_setfield(L, -2, key.c_str());
    }
    lua_setfield(L, -2, "hparams");
    return 1;
  });
}

const Binding kEngineFunctions[] = {{"debug", log<core::log::Level::debug>},
                                    {"info", log<core::log::Level::info>},
                                    {"warn", log<core::log::Level::warn>},
                                    {"threads", e_threads},
                                    {"clock", e_clock},
                                    {"checkpoint", e_checkpoint},
                                    {nullptr, nullptr}};

}  // namespace

int open_engine(lua_State* L) {
  lua_newtable(L);
  set_bindings(L, kEngineFunctions);
  lua_pushstring(L, core::engine_version().c_str());
  lua_setfield(L, -2, "version");
  lua_pushstring(L, core::torch_version().c_str());
  lua_setfield(L, -2, "torch_version");
  return 1;
}

}  // namespace engine::lua
