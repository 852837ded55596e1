// The value of one benchmark parameter (a sweep's constant, a variable's value, a flag), and the
// text it is written as in flags, tables and results files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace engine::bench {

using Value = std::variant<bool, int64_t, double, std::string>;

// A point of a sweep: every parameter with its value, in name order.
using Point = std::map<std::string, Value>;

// "16", "0.5", "true", "resnet18"
std::string value_text(const Value& value);
// "16" is an integer, "0.5" a number, "true"/"false" a boolean, anything else a string.
Value parse_value(const std::string& text);
// Equal values; an integer equals the same number (16 == 16.0).
bool values_equal(const Value& a, const Value& b);
// "integer", "number", "boolean", "string"
const char* value_type(const Value& value);

// "batch_size=16, model=resnet18"
std::string point_text(const Point& point);

}  // namespace engine::bench
