// A training script's own state (ctx.state): what it carries from batch to batch (an RNN's
// hidden state, EMA weights, fixed noise, counters), saved with every checkpoint and read back
// on resume, so that a resumed run goes on exactly.
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_hooks.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "engine/lua/torch/serialize.hpp"

namespace engine::lua {

// state = function(hp) return {...} end, or a table; ctx.state is that table (empty without it)
void TrainScript::read_script_state(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  StackGuard restore(L);
  push_field("state");
  const int type = lua_type(L, -1);
  lua_pop(L, 1);
  if (type == LUA_TFUNCTION) {
    push_hparams();
    call_field("state", 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_newtable(L);
    }
  } else if (type == LUA_TTABLE || type == LUA_TNIL) {
    push_field("state");
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_newtable(L);
    }
  } else {
    throw core::ScriptError(path_ + ": 'state' must be a function(hp) returning a table, or a " +
                            "table (got " + lua_typename(L, type) + ")");
  }
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ + ": 'state' must return a table (got " + type_name(L, -1) + ")");
  }
  hooks_->set_ctx_field("state", -1);
  spec.script_state.save = [this](hid_t group) {
    lua_State* S = runtime_.state();
    StackGuard keep(S);
    hooks_->push_ctx_field("state");
    if (!lua_istable(S, -1)) {
      throw core::ScriptError(path_ + ": ctx.state must stay a table to be checkpointed (it is a " +
                              type_name(S, -1) + ")");
    }
    write_lua_table(S, -1, group, "ctx.state");
  };
  // the saved values go into the table the script holds, so that a function keeping a reference
  // to it sees them too
  spec.script_state.restore = [this](hid_t group) {
    lua_State* S = runtime_.state();
    StackGuard keep(S);
    hooks_->push_ctx_field("state");
    if (!lua_istable(S, -1)) {
      lua_pop(S, 1);
      lua_newtable(S);
      hooks_->set_ctx_field("state", -1);
    }
    const int table = lua_gettop(S);
    for (lua_pushnil(S); lua_next(S, table) != 0; lua_pushnil(S)) {
      lua_pop(S, 1);  // the value; the key stays
      lua_pushnil(S);
      lua_rawset(S, table);
    }
    push_lua_group(S, group);
    const int saved = lua_gettop(S);
    for (lua_pushnil(S); lua_next(S, saved) != 0;) {
      lua_pushvalue(S, -2);
      lua_insert(S, -2);
      lua_rawset(S, table);
    }
  };
}

}  // namespace engine::lua
