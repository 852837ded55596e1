#include "engine/lua/runtime/script_random.hpp"

#include <cmath>

#include "engine/core/format.hpp"
#include "engine/core/numbers.hpp"
#include "engine/lua/runtime/runtime.hpp"

namespace engine::lua {
namespace {

uint64_t rotate_left(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// splitmix64: spreads one seed over the four words, as xoshiro's authors recommend
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

ScriptRandom& generator(lua_State* L) {
  return *static_cast<ScriptRandom*>(lua_touserdata(L, lua_upvalueindex(1)));
}

double integer_argument(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TNUMBER) {
    throw ArgumentError("math.random: argument #" + std::to_string(index) +
                        " must be a number, got " + lua_typename(L, lua_type(L, index)));
  }
  return std::floor(lua_tonumber(L, index));
}

// math.random() in [0, 1); math.random(m) in 1..m; math.random(m, n) in m..n (Lua 5.1's rules)
int l_random(lua_State* L) {
  return guarded(L, [&] {
    auto& random = generator(L);
    const double r = random.uniform();
    const int args = lua_gettop(L);
    if (args == 0) {
      lua_pushnumber(L, r);
      return 1;
    }
    if (args > 2) throw ArgumentError("math.random: wrong number of arguments");
    const double low = args == 1 ? 1.0 : integer_argument(L, 1);
    const double high = integer_argument(L, args);
    if (low > high) {
      throw ArgumentError("math.random: interval is empty (" + core::number_string(low) + ", " +
                          core::number_string(high) + ")");
    }
    lua_pushnumber(L, low + std::floor(r * (high - low + 1)));
    return 1;
  });
}

int l_randomseed(lua_State* L) {
  return guarded(L, [&] {
    if (lua_type(L, 1) != LUA_TNUMBER) {
      throw ArgumentError(std::string("math.randomseed: the seed must be a number, got ") +
                          lua_typename(L, lua_type(L, 1)));
    }
    const auto seed = core::exact_int64(lua_tonumber(L, 1));
    if (!seed) {
      throw ArgumentError("math.randomseed: the seed must be an integer, got " +
                          core::number_string(lua_tonumber(L, 1)));
    }
    generator(L).reseed(static_cast<uint64_t>(*seed));
    return 0;
  });
}

}  // namespace

void ScriptRandom::reseed(uint64_t seed) {
  for (auto& word : s_) word = splitmix(seed);
}

uint64_t ScriptRandom::next() {
  const uint64_t result = rotate_left(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotate_left(s_[3], 45);
  return result;
}

double ScriptRandom::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

torch::Tensor ScriptRandom::state() const {
  auto out = torch::empty({4}, torch::kInt64);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<int64_t>(s_[i]);
  return out;
}

void ScriptRandom::set_state(const torch::Tensor& state) {
  if (state.scalar_type() != torch::kInt64 || state.dim() != 1 || state.size(0) != 4) {
    throw core::DataError("math.random's state must be 4 int64 values, got " +
                          core::shape_string(state.sizes()));
  }
  auto words = state.contiguous();
  for (int i = 0; i < 4; ++i) s_[i] = static_cast<uint64_t>(words[i].item<int64_t>());
}

void ScriptRandom::install(lua_State* L) {
  lua_getglobal(L, "math");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, l_random, 1);
  lua_setfield(L, -2, "random");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, l_randomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
}

}  // namespace engine::lua
