// math.random and math.randomseed on the engine's generator: Lua 5.1's rules, a state that
// can be saved and restored.
#include <doctest/doctest.h>

#include <fstream>

#include "engine/lua/runtime/runtime.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

void run(lua::Runtime& runtime, const std::string& code) {
  runtime.run_string(code, "test", 0);
}

}  // namespace

TEST_CASE("math.random keeps Lua's ranges and checks its arguments") {
  lua::Runtime runtime;
  run(runtime,
      "local seen, sum = {}, 0\n"
      "for i = 1, 20000 do\n"
      "  local r = math.random(); assert(r >= 0 and r < 1); sum = sum + r\n"
      "  local d = math.random(6); assert(d >= 1 and d <= 6 and d % 1 == 0); seen[d] = true\n"
      "  local e = math.random(-2, 2); assert(e >= -2 and e <= 2 and e % 1 == 0)\n"
      "end\n"
      "for d = 1, 6 do assert(seen[d], d) end\n"
      "assert(math.abs(sum / 20000 - 0.5) < 0.01, sum)\n"
      "assert(math.random(3, 3) == 3)\n"
      "local ok, err = pcall(math.random, 0); assert(not ok and err:find('interval is empty'), "
      "err)\n"
      "ok, err = pcall(math.random, 5, 1); assert(not ok and err:find('interval is empty'), err)\n"
      "ok, err = pcall(math.random, 1, 2, 3); assert(not ok and err:find('wrong number'), err)\n"
      "ok, err = pcall(math.random, 'x'); assert(not ok and err:find('must be a number'), err)\n"
      "ok, err = pcall(math.randomseed, {}); assert(not ok and err:find('must be a number'), "
      "err)\n");
}

TEST_CASE("math.randomseed repeats a sequence; a saved state continues it exactly") {
  lua::Runtime runtime;
  run(runtime,
      "math.randomseed(42); a = {math.random(), math.random(100)}\n"
      "math.randomseed(42); b = {math.random(), math.random(100)}\n"
      "assert(a[1] == b[1] and a[2] == b[2])\n"
      "math.randomseed(43); assert(math.random() ~= a[1])\n");
  auto& random = runtime.random();
  random.reseed(7);
  const auto saved = random.state();
  run(runtime, "first = {math.random(), math.random(), math.random(1000)}");
  random.reseed(99);  // what a fresh process would hold
  run(runtime, "math.random()");
  random.set_state(saved);
  run(runtime,
      "local again = {math.random(), math.random(), math.random(1000)}\n"
      "for i = 1, 3 do assert(again[i] == first[i], i) end\n");
  CHECK_THROWS_WITH_AS(random.set_state(torch::zeros({3}, torch::kInt64)),
                       doctest::Contains("4 int64 values, got [3]"), core::DataError);
  CHECK(lua_gettop(runtime.state()) == 0);
}
