// The search half of a training script: its hyperparameters' search spaces and its `searcher`
// table, for engine search (LUA_API.md, "A hyperparameter search").
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/numbers.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"
#include "engine/lua/search/space_value.hpp"

namespace engine::lua {

search::SearchSpace TrainScript::search_space() const {
  lua_State* L = runtime_.state();
  search::SearchSpace out;
  out.constants = hparams();
  for_each_hparam([&](const std::string& name) {
    if (const auto* space = test_space(L, -1)) out.spaces[name] = *space;
  });
  return out;
}

std::optional<search::SearcherConfig> TrainScript::searcher() const {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_field("searcher");
  if (lua_isnil(L, -1)) return std::nullopt;
  if (!lua_istable(L, -1)) {
    throw core::ScriptError(path_ + ": 'searcher' must be a table (got " + type_name(L, -1) + ")");
  }
  const int t = lua_gettop(L);
  try {
    Options o(L, t, "searcher",
              {"name", "sampler", "metric", "smaller_is_better", "max_trials", "max_rungs",
               "divisor", "max_length", "unit", "max_concurrent_trials", "max_restarts"});
    search::SearcherConfig c;
    c.name = o.string("name", c.name);
    c.sampler = o.string("sampler", c.sampler);
    c.metric = o.string("metric", c.metric);
    c.smaller_is_better = o.boolean("smaller_is_better", c.smaller_is_better);
    c.max_trials = o.integer("max_trials", c.max_trials);
    c.max_rungs = o.integer("max_rungs", c.max_rungs);
    c.divisor = o.number("divisor", c.divisor);
    c.unit = o.string("unit", c.unit);
    c.max_concurrent_trials = o.integer("max_concurrent_trials", c.max_concurrent_trials);
    c.max_restarts = o.integer("max_restarts", c.max_restarts);
    raw_get(L, t, "max_length");
    if (lua_type(L, -1) == LUA_TNUMBER) {
      const auto length = core::exact_int64(lua_tonumber(L, -1));
      if (!length) {
        throw core::ScriptError("searcher.max_length: a whole number of " + c.unit + ", got " +
                                core::number_string(lua_tonumber(L, -1)));
      }
      c.max_length = *length;
    } else if (lua_istable(L, -1)) {  // Determined's {epochs = 4} or {steps = 500}
      Options length(L, lua_gettop(L), "searcher.max_length", {"epochs", "steps"});
      if (length.has("epochs") == length.has("steps")) {
        throw core::ScriptError("searcher.max_length: give one of {epochs = n} or {steps = n}");
      }
      c.unit = length.has("epochs") ? "epochs" : "steps";
      c.max_length = length.integer(c.unit.c_str(), 0);
    } else if (!lua_isnil(L, -1)) {
      throw core::ScriptError("searcher.max_length: a number, {epochs = n} or {steps = n} (got " +
                              type_name(L, -1) + ")");
    }
    return c;
  } catch (const core::Error& e) {
    throw core::ScriptError(path_ + ": " + e.what());
  }
}

}  // namespace engine::lua
