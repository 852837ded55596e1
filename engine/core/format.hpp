// Small formatting helpers used in messages and console output.
#pragma once

#include <c10/util/ArrayRef.h>

#include <string>
#include <vector>

namespace engine::core {

// "[64, 1, 28, 28]"
std::string shape_string(c10::IntArrayRef shape);

// "1m23s", "45.2s"
std::string duration_string(double seconds);

// "0.001", "65536", "1e+38", "nan" (never "-nan"): six significant digits.
std::string number_string(double value);

// "a, b, c" for a list of names.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace engine::core
