// require 'search': the search spaces of a hyperparameter search (LUA_API.md). Each function
// returns a SearchSpace value; engine search draws from them, engine train refuses them unless
// --set gives the value.
//   search.const(v)                   search.choice{v1, v2, ...} (also search.grid{...})
//   search.int(lo, hi[, {count = n}]) search.uniform(lo, hi[, {count = n}])
//   search.log(lo, hi[, base][, {count = n}])
#include <cmath>
#include <string>

#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/search/space_value.hpp"

namespace engine::lua {
namespace {

io::HParam hparam_at(lua_State* L, int index, const std::string& who) {
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
      return lua_tonumber(L, index);
    case LUA_TBOOLEAN:
      return static_cast<bool>(lua_toboolean(L, index));
    case LUA_TSTRING:
      return std::string(lua_tostring(L, index));
    default:
      throw ArgumentError(who + ": values are numbers, booleans or strings (got " +
                          type_name(L, index) + ")");
  }
}

int push_space(lua_State* L, search::Space space) {
  push_new<SpaceBox>(L, SpaceBox{std::move(space)});
  return 1;
}

// The optional trailing {count = n}.
int64_t count_at(lua_State* L, int index, const char* who) {
  if (lua_isnoneornil(L, index)) return 0;
  Options o(L, index, who, {"count"});
  const int64_t count = o.integer("count", 0);
  if (count < 1) throw ArgumentError(std::string(who) + ": count must be >= 1");
  return count;
}

void check_range(double lo, double hi, const char* who) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
    throw ArgumentError(std::string(who) + ": needs lo < hi, got " + std::to_string(lo) + ", " +
                        std::to_string(hi));
  }
}

int s_const(lua_State* L) {
  return guarded(L, [&] {
    search::Space s;
    s.values = {hparam_at(L, 1, "search.const")};
    return push_space(L, std::move(s));
  });
}

int s_choice(lua_State* L) {
  return guarded(L, [&] {
    if (!lua_istable(L, 1)) {
      throw ArgumentError("search.choice: expects a list of values, e.g. search.choice{32, 64}");
    }
    search::Space s;
    s.kind = search::Space::Kind::kChoice;
    const auto n = static_cast<int>(lua_objlen(L, 1));
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, 1, i);
      s.values.push_back(hparam_at(L, -1, "search.choice"));
      lua_pop(L, 1);
      if (s.values.back().index() != s.values.front().index()) {
        throw ArgumentError("search.choice: every value must be of one type (value " +
                            std::to_string(i) + " differs from the first)");
      }
    }
    if (s.values.empty()) throw ArgumentError("search.choice: needs at least one value");
    return push_space(L, std::move(s));
  });
}

int s_int(lua_State* L) {
  return guarded(L, [&] {
    search::Space s;
    s.kind = search::Space::Kind::kInt;
    s.lo = check_number(L, 1, "search.int");
    s.hi = check_number(L, 2, "search.int");
    if (s.lo != std::floor(s.lo) || s.hi != std::floor(s.hi)) {
      throw ArgumentError("search.int: lo and hi must be whole numbers");
    }
    check_range(s.lo, s.hi, "search.int");
    s.count = count_at(L, 3, "search.int");
    return push_space(L, std::move(s));
  });
}

int s_uniform(lua_State* L) {
  return guarded(L, [&] {
    search::Space s;
    s.kind = search::Space::Kind::kUniform;
    s.lo = check_number(L, 1, "search.uniform");
    s.hi = check_number(L, 2, "search.uniform");
    check_range(s.lo, s.hi, "search.uniform");
    s.count = count_at(L, 3, "search.uniform");
    return push_space(L, std::move(s));
  });
}

int s_log(lua_State* L) {
  return guarded(L, [&] {
    search::Space s;
    s.kind = search::Space::Kind::kLog;
    s.lo = check_number(L, 1, "search.log");
    s.hi = check_number(L, 2, "search.log");
    check_range(s.lo, s.hi, "search.log");
    if (s.lo <= 0) throw ArgumentError("search.log: lo and hi must be > 0");
    int options = 3;
    if (lua_type(L, 3) == LUA_TNUMBER) {
      s.base = lua_tonumber(L, 3);
      if (!(s.base > 1)) throw ArgumentError("search.log: the base must be > 1");
      options = 4;
    }
    s.count = count_at(L, options, "search.log");
    return push_space(L, std::move(s));
  });
}

int space_tostring(lua_State* L) {
  return guarded(L, [&] {
    const auto* space = test_space(L, 1);
    const std::string text = space ? space->describe() : "SearchSpace (released)";
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  });
}

}  // namespace

const search::Space* test_space(lua_State* L, int index) {
  const SpaceBox* box = test<SpaceBox>(L, index);
  return box ? &box->space : nullptr;
}

int open_search(lua_State* L) {
  static const luaL_Reg meta[] = {{"__tostring", space_tostring}, {nullptr, nullptr}};
  static const Binding functions[] = {
      {"const", s_const},     {"choice", s_choice}, {"grid", s_choice}, {"int", s_int},
      {"uniform", s_uniform}, {"log", s_log},       {nullptr, nullptr}};
  define_type(L, SpaceBox::kTypeName, nullptr, meta, gc_userdata<SpaceBox>);
  lua_newtable(L);
  set_bindings(L, functions);
  return 1;
}

}  // namespace engine::lua
