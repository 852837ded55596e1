#include "engine/bench/value.hpp"

#include <cmath>
#include <cstdlib>

#include "engine/core/format.hpp"

namespace engine::bench {

std::string value_text(const Value& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return core::number_string(*d);
  return std::get<std::string>(value);
}

Value parse_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (!text.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) return static_cast<int64_t>(i);
    const double d = std::strtod(text.c_str(), &end);
    if (*end == '\0' && std::isfinite(d)) return d;
  }
  return text;
}

namespace {

bool as_number(const Value& v, double& out) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    out = static_cast<double>(*i);
    return true;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    out = *d;
    return true;
  }
  return false;
}

}  // namespace

bool values_equal(const Value& a, const Value& b) {
  double x = 0, y = 0;
  if (as_number(a, x) && as_number(b, y)) return x == y;
  return a == b;
}

const char* value_type(const Value& value) {
  static const char* const names[] = {"boolean", "integer", "number", "string"};
  return names[value.index()];
}

std::string point_text(const Point& point) {
  std::string text;
  for (const auto& [name, value] : point) {
    if (!text.empty()) text += ", ";
    text += name + "=" + value_text(value);
  }
  return text;
}

}  // namespace engine::bench
