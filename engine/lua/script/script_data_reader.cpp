// What a training script's `data` function returns (train, validation, test pipelines; any
// other key an error naming its line) and its `classes` list (train_script_reader.cpp reads
// the rest).
#include <optional>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/lua/data/data_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/script/train_script_reader.hpp"

namespace engine::lua {

// "script.lua:12" where the script's text writes `key = ...` in its data table, else the path.
std::string TrainScript::data_key_location(const std::string& key) const {
  std::string where = path_;
  try {
    const auto bytes = core::read_file(path_);
    const int64_t line = field_key_line(std::string(bytes.begin(), bytes.end()), "data", key);
    if (line > 0) where += ":" + std::to_string(line);
  } catch (const core::Error&) {
  }
  return where;
}

void TrainScript::check_data_keys(int table) const {
  lua_State* L = runtime_.state();
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    lua_pop(L, 1);
    const std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a name)";
    if (key == "train" || key == "validation" || key == "test") continue;
    lua_pop(L, 1);
    const std::string where = data_key_location(key);
    throw core::ScriptError(where + ": unknown key '" + key +
                            "' in the table 'data' returns (accepted: train, validation, test)");
  }
}

void TrainScript::read_data(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  push_hparams();
  call_field("data", 1);
  if (!lua_istable(L, -1))
    throw core::ScriptError(path_ +
                            ": 'data' must return a table {train = ..., validation = ...} (got " +
                            type_name(L, -1) + ")");
  check_data_keys(lua_gettop(L));
  for (const auto& [split, into] : {std::pair{"train", &spec.train_data},
                                    {"validation", &spec.validation_data},
                                    {"test", &spec.test_data}}) {
    raw_get(L, -1, split);
    if (auto* p = test<PipelineBox>(L, -1)) {
      // the trainer steps on batches: an unbatched pipeline is the script's mistake, said
      // before anything is written (the held-out test split is read only by engine eval)
      if (!p->pipeline.batched() && std::string(split) != "test") {
        throw core::ScriptError(
            data_key_location(split) + ": the '" + split +
            "' pipeline data() returns is not batched: end it with :batch(n) (" +
            p->pipeline.describe() + ")");
      }
      *into = p->pipeline;
    } else if (!lua_isnil(L, -1)) {
      throw core::ScriptError(path_ + ": data." + std::string(split) + " must be a pipeline (got " +
                              type_name(L, -1) + ")");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

// classes = {'T-shirt', 'Trouser', ...}: the names of the model's classes, in class order
void TrainScript::read_class_names(train::TrainSpec& spec) {
  lua_State* L = runtime_.state();
  push_field("classes");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  const auto bad = [&] {
    return core::ScriptError(path_ +
                             ": 'classes' must be a list of class names, {'cat', 'dog'} (got " +
                             type_name(L, -1) + ")");
  };
  if (!lua_istable(L, -1)) throw bad();
  const int n = static_cast<int>(lua_objlen(L, -1));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, i);
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pop(L, 1);
      throw core::ScriptError(path_ + ": classes[" + std::to_string(i) + "] must be a name (text)");
    }
    spec.class_names.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void TrainScript::set_budget(const std::string& unit, int64_t length,
                             std::optional<int64_t> stage) {
  lua_State* L = runtime_.state();
  StackGuard guard(L);
  push_hparams();
  // through a metatable: hp.budget reads it, the hyperparameters (raw keys) stay the script's
  lua_newtable(L);  // the metatable
  lua_newtable(L);  // its __index
  lua_newtable(L);  // budget
  lua_pushnumber(L, static_cast<double>(length));
  lua_setfield(L, -2, unit.c_str());
  lua_setfield(L, -2, "budget");
  if (stage) {
    lua_newtable(L);  // rung
    lua_pushnumber(L, static_cast<double>(*stage));
    lua_setfield(L, -2, unit.c_str());
    lua_setfield(L, -2, "rung");
  }
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

std::optional<std::vector<std::string>> TrainScript::logged_metrics() const {
  lua_State* L = runtime_.state();
  for (const char* hook : {"train_batch", "evaluate_batch"}) {
    push_field(hook);
    const bool has = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has) return std::nullopt;
  }
  std::vector<std::string> names{"loss"};
  push_field("metrics");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING) names.emplace_back(lua_tostring(L, -2));
      if (lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TSTRING) {
        names.emplace_back(lua_tostring(L, -1));
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  return names;
}

}  // namespace engine::lua
