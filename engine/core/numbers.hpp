// Numbers from outside (Lua's doubles, file attributes) as integers. Casting NaN, an infinity
// or a double beyond int64_t's range to an integer is undefined behaviour in C++, so every such
// conversion goes through here.
#pragma once

#include <cstdint>
#include <optional>

namespace engine::core {

// v when it is a whole number that int64_t holds; nullopt otherwise (0.5, NaN, 1e300).
inline std::optional<int64_t> exact_int64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return std::nullopt;
  const auto i = static_cast<int64_t>(v);
  if (static_cast<double>(i) != v) return std::nullopt;
  return i;
}

}  // namespace engine::core
