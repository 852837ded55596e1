// math.random and math.randomseed for scripts, on a generator whose state can be read and set:
// LuaJIT's own is out of reach of the C API, so a checkpoint could not keep it, and a resumed run
// would draw other numbers than an uninterrupted one.
#pragma once

#include <torch/types.h>

#include <cstdint>

struct lua_State;

namespace engine::lua {

class ScriptRandom {
 public:
  explicit ScriptRandom(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next();   // xoshiro256**: 64 random bits
  double uniform();  // in [0, 1), 53 random bits
  // The four 64-bit words of the state, as an int64 tensor; set_state checks the shape.
  torch::Tensor state() const;
  void set_state(const torch::Tensor& state);
  // Replaces math.random and math.randomseed of L with this generator's; it must outlive L.
  void install(lua_State* L);

 private:
  uint64_t s_[4];
};

}  // namespace engine::lua
