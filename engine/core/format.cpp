#include "engine/core/format.hpp"

#include <cmath>
#include <cstdio>

namespace engine::core {

std::string shape_string(c10::IntArrayRef shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string number_string(double value) {
  if (std::isnan(value)) return "nan";  // printf writes -nan for some NaNs
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

std::string duration_string(double seconds) {
  char buf[64];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(seconds) / 60,
                  static_cast<int>(seconds) % 60);
  } else if (seconds < 1e9) {  // beyond that an int would overflow (a file from elsewhere)
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) / 60) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.3gh", seconds / 3600);
  }
  return buf;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace engine::core
