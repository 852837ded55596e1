#include "engine/lua/script/bench_model.hpp"

#include "engine/core/errors.hpp"
#include "engine/core/numbers.hpp"
#include "engine/lua/data/data_value.hpp"
#include "engine/lua/nn/lua_module.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {
namespace {

// Returns the module, its input shape, classes, input kind and where it came from ('zoo' or the
// path); when the target is neither an id nor a readable file, nil and the known zoo ids.
const char* kLoadModel = R"lua(
local target = ...
local nn, zoo = require 'nn', require 'zoo'
local entry = zoo[target]
-- models that make their own example batches are timed on them, whatever their input
local function kind(module, input_kind)
  if type(module) == 'table' and type(module.example_input) == 'function' then return nil end
  return input_kind
end
if entry then
  local module = nn.model(target)
  return module, entry.input, entry.classes, kind(module, entry.input_kind), 'zoo'
end
local file = io.open(target, 'r')
if not file then
  local ids = {}
  for id in pairs(zoo) do ids[#ids + 1] = id end
  table.sort(ids)
  return nil, nil, nil, nil, table.concat(ids, ', ')
end
file:close()
local value = dofile(target)
local module = value
local unsupplied = nil
if type(value) == 'table' and rawget(value, '__classname') and not rawget(value, '__cpp') then
  module = value()  -- a class: build it with no arguments
  -- the arguments its init takes, which it got none of
  local init = value.init
  if type(init) == 'function' then
    local info = debug.getinfo(init, 'u')
    local names = {}
    for i = 2, info.nparams do names[#names + 1] = debug.getlocal(init, i) end
    if info.isvararg then names[#names + 1] = '...' end
    if #names > 0 then unsupplied = value.__classname .. ':init(' .. table.concat(names, ', ') .. ')' end
  end
end
local fields = type(value) == 'table' and value or {}
return module, fields.input_shape, fields.classes, kind(module, fields.input_kind), target,
       unsupplied
)lua";

std::vector<int64_t> shape_at(lua_State* L, int index) {
  std::vector<int64_t> shape;
  if (!lua_istable(L, index)) return shape;
  for (int i = 1;; ++i) {
    lua_rawgeti(L, index, i);
    const bool number = lua_type(L, -1) == LUA_TNUMBER;
    if (number) shape.push_back(core::exact_int64(lua_tonumber(L, -1)).value_or(-1));
    lua_pop(L, 1);
    if (!number) break;
  }
  return shape;
}

}  // namespace

BenchModel load_bench_model(Runtime& runtime, const std::string& model) {
  lua_State* L = runtime.state();
  StackGuard guard(L);
  if (luaL_loadbuffer(L, kLoadModel, std::char_traits<char>::length(kLoadModel),
                      "=[engine bench]") != 0) {
    throw std::logic_error(lua_tostring(L, -1));
  }
  lua_pushstring(L, model.c_str());
  runtime.call(1, 6);
  std::string unsupplied = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  if (lua_isnil(L, -5)) {
    throw core::UsageError("--model '" + model +
                           "' is neither a zoo model nor a Lua module file (zoo: " +
                           std::string(lua_tostring(L, -1) ? lua_tostring(L, -1) : "") + ")");
  }
  if (lua_isstring(L, -2)) {
    throw core::UsageError("--model '" + model + "' takes " + lua_tostring(L, -2) +
                           "; engine bench times models whose input is an image or a feature "
                           "vector so far");
  }
  auto* box = test_module(L, -5);
  if (!box) {
    throw core::ScriptError(model + " must return a module or a module class (got " +
                            type_name(L, -5) + ")");
  }
  BenchModel out;
  out.model = model_from(*box);
  if (auto lua_defined = std::dynamic_pointer_cast<LuaModuleImpl>(box->module())) {
    lua_defined->push_object(L);
    lua_getfield(L, -1, "example_input");
    const bool has_example = lua_isfunction(L, -1);
    lua_pop(L, 2);
    if (has_example) {
      Runtime* rt = &runtime;
      out.example_batch = [rt, lua_defined](int64_t batch_size) {
        lua_State* L = rt->state();
        StackGuard guard(L);
        lua_defined->push_object(L);
        lua_getfield(L, -1, "example_input");
        lua_insert(L, -2);  // example_input(self, n)
        lua_pushnumber(L, static_cast<double>(batch_size));
        rt->call(2, 1);
        return read_inputs(L, -1, lua_defined->class_name() + ":example_input");
      };
    }
  }
  out.input_shape = shape_at(L, -4);
  out.classes =
      lua_type(L, -3) == LUA_TNUMBER ? core::exact_int64(lua_tonumber(L, -3)).value_or(-1) : 0;
  out.source = lua_tostring(L, -1);
  out.unsupplied_arguments = unsupplied;
  return out;
}

}  // namespace engine::lua
