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

// The most steps, epochs or batches a run counts: 2^53, the largest integer a Lua number (a
// double) holds exactly, so that a hook, a --set and the run file see the count the run keeps.
// Counts are checked against it where they enter (flags, script fields), and products of counts
// go through count_product, so that no run length wraps around to a negative or zero length.
inline constexpr int64_t kMaxCount = int64_t{1} << 53;

// a * b for counts 0 <= a, b when the product is at most kMaxCount; nullopt otherwise
inline std::optional<int64_t> count_product(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  if (a != 0 && b > kMaxCount / a) return std::nullopt;
  return a * b;
}

}  // namespace engine::core
