// Lua tables of tensors, numbers, strings and booleans as HDF5 groups and back: torch.save and
// torch.load, and what a training script keeps in ctx.state (its checkpoints' /script_state).
#pragma once

#include <string>

#include "engine/io/hdf5.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {

// Writes the table at index into group (a list keeps its order through the attribute lua_list);
// `who` starts every error ("ctx.state: cannot save a function (at 'fn')").
void write_lua_table(lua_State* L, int index, hid_t group, const std::string& who);
// Pushes the table a group holds.
void push_lua_group(lua_State* L, hid_t group);

}  // namespace engine::lua
