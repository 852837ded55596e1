// Reading the arguments of the Lua bindings: numbers, integers and strings checked with the
// error Lua's own functions give (`bad argument #2 to 'f' (number expected, got nil)`), the
// options tables (Options) and lists of numbers or sizes (runtime.hpp).
#include <optional>

#include "engine/core/numbers.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {

double check_number(lua_State* L, int index, const char* function) {
  if (lua_type(L, index) != LUA_TNUMBER) {
    throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                        "' (number expected, got " + type_name(L, index) + ")");
  }
  return lua_tonumber(L, index);
}

int64_t check_integer(lua_State* L, int index, const char* function) {
  const double v = check_number(L, index, function);
  const auto whole = core::exact_int64(v);
  if (!whole) {
    throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                        "' (integer expected, got " + core::number_string(v) + ")");
  }
  return *whole;
}

std::string check_string(lua_State* L, int index, const char* function) {
  if (lua_type(L, index) != LUA_TSTRING) {
    throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                        "' (string expected, got " + type_name(L, index) + ")");
  }
  size_t n = 0;
  const char* s = lua_tolstring(L, index, &n);
  return std::string(s, n);
}

Options::Options(lua_State* L, int index, std::string function, std::vector<const char*> accepted)
    : L_(L), index_(0), function_(std::move(function)) {
  if (index == 0 || lua_isnoneornil(L, index)) return;
  if (!lua_istable(L, index)) {
    throw ArgumentError(function_ + ": options must be a table, got " + type_name(L, index));
  }
  index_ = absolute_index(L, index);
  lua_pushnil(L);
  while (lua_next(L, index_) != 0) {
    lua_pop(L, 1);
    std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    bool known = false;
    for (const char* a : accepted) known = known || key == a;
    if (!known) {
      if (key.empty()) key = "(a " + type_name(L, -1) + " key)";
      lua_pop(L, 1);
      std::string list;
      for (const char* a : accepted) list += (list.empty() ? "" : ", ") + std::string(a);
      throw ArgumentError(function_ + ": unknown option '" + key +
                          "' (accepted: " + (list.empty() ? "none" : list) + ")");
    }
  }
}

void Options::push(const char* key) const {
  if (index_ == 0) {
    lua_pushnil(L_);
  } else {
    lua_pushstring(L_, key);  // raw: no metamethod may raise while C++ objects are alive
    lua_rawget(L_, index_);
  }
}

bool Options::has(const char* key) const {
  push(key);
  const bool present = !lua_isnil(L_, -1);
  lua_pop(L_, 1);
  return present;
}

double Options::number(const char* key, double fallback) const {
  push(key);
  const int t = lua_type(L_, -1);
  const double v = lua_tonumber(L_, -1);
  const std::string got = type_name(L_, -1);
  lua_pop(L_, 1);
  if (t == LUA_TNIL) return fallback;
  if (t != LUA_TNUMBER) {
    throw ArgumentError(function_ + ": option '" + key + "' must be a number, got " + got);
  }
  return v;
}

int64_t Options::integer(const char* key, int64_t fallback) const {
  const double v = number(key, static_cast<double>(fallback));
  const auto whole = core::exact_int64(v);
  if (!whole) {
    throw ArgumentError(function_ + ": option '" + key + "' must be an integer, got " +
                        core::number_string(v));
  }
  return *whole;
}

bool Options::boolean(const char* key, bool fallback) const {
  push(key);
  const int t = lua_type(L_, -1);
  const bool v = lua_toboolean(L_, -1);
  const std::string got = type_name(L_, -1);
  lua_pop(L_, 1);
  if (t == LUA_TNIL) return fallback;
  if (t != LUA_TBOOLEAN) {
    throw ArgumentError(function_ + ": option '" + key + "' must be a boolean, got " + got);
  }
  return v;
}

std::string Options::string(const char* key, const std::string& fallback) const {
  push(key);
  const int t = lua_type(L_, -1);
  std::string v = t == LUA_TSTRING ? lua_tostring(L_, -1) : "";
  const std::string got = type_name(L_, -1);
  lua_pop(L_, 1);
  if (t == LUA_TNIL) return fallback;
  if (t != LUA_TSTRING) {
    throw ArgumentError(function_ + ": option '" + key + "' must be a string, got " + got);
  }
  return v;
}

std::vector<int64_t> Options::integers(const char* key, std::vector<int64_t> fallback,
                                       size_t count) const {
  push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return fallback;
  }
  std::vector<int64_t> out;
  try {
    out = size_list(L_, -1, function_ + ": option '" + key + "'", count);
  } catch (...) {
    lua_pop(L_, 1);
    throw;
  }
  lua_pop(L_, 1);
  return out;
}

std::vector<double> Options::numbers(const char* key, std::vector<double> fallback) const {
  push(key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return fallback;
  }
  std::vector<double> out;
  try {
    out = number_list(L_, -1, function_ + ": option '" + key + "'");
  } catch (...) {
    lua_pop(L_, 1);
    throw;
  }
  lua_pop(L_, 1);
  return out;
}

std::optional<std::vector<std::string>> Options::strings(const char* key) const {
  push(key);
  const int index = lua_gettop(L_);
  std::vector<std::string> out;
  // lua_tostring converts a number in place: only ever on a copy pushed for the purpose
  const auto take = [&](int i, const std::string& what) {
    const int t = lua_type(L_, i);
    if (t != LUA_TSTRING && t != LUA_TNUMBER) {
      const std::string got = type_name(L_, i);
      lua_settop(L_, index - 1);
      throw ArgumentError(function_ + ": option '" + key + "'" + what + " must be a string, got " +
                          got);
    }
    if (t == LUA_TNUMBER && lua_tonumber(L_, i) == static_cast<double>(lua_tointeger(L_, i))) {
      out.push_back(std::to_string(lua_tointeger(L_, i)));
    } else {
      lua_pushvalue(L_, i);
      out.push_back(lua_tostring(L_, -1));
      lua_pop(L_, 1);
    }
  };
  if (lua_isnil(L_, index)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  if (lua_istable(L_, index)) {
    const size_t n = lua_objlen(L_, index);
    for (size_t i = 1; i <= n; ++i) {
      lua_rawgeti(L_, index, static_cast<int>(i));
      take(lua_gettop(L_), " element " + std::to_string(i));
      lua_pop(L_, 1);
    }
  } else {
    take(index, "");
  }
  lua_pop(L_, 1);
  return out;
}

std::vector<double> number_list(lua_State* L, int index, const std::string& what) {
  index = absolute_index(L, index);
  if (lua_type(L, index) == LUA_TNUMBER) return {lua_tonumber(L, index)};
  if (!lua_istable(L, index)) {
    throw ArgumentError(what + " must be a number or a list of numbers, got " +
                        type_name(L, index));
  }
  std::vector<double> out;
  const size_t n = lua_objlen(L, index);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    const bool ok = lua_type(L, -1) == LUA_TNUMBER;
    const double v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!ok) throw ArgumentError(what + ": element " + std::to_string(i) + " is not a number");
    out.push_back(v);
  }
  return out;
}

std::vector<int64_t> integer_list(lua_State* L, int index, const std::string& what) {
  std::vector<int64_t> out;
  for (double v : number_list(L, index, what)) {
    const auto whole = core::exact_int64(v);
    if (!whole) throw ArgumentError(what + ": integers expected, got " + core::number_string(v));
    out.push_back(*whole);
  }
  return out;
}

std::vector<int64_t> size_list(lua_State* L, int index, const std::string& what, size_t count) {
  std::vector<int64_t> out = integer_list(L, index, what);
  if (out.size() == 1) out.assign(count, out[0]);
  if (out.size() != count) {
    throw ArgumentError(what + " needs 1 or " + std::to_string(count) + " values, got " +
                        std::to_string(out.size()));
  }
  return out;
}

}  // namespace engine::lua
