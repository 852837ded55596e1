#include "engine/report/sparkline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine::report {

std::string sparkline(const std::vector<double>& values, size_t width) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  const size_t buckets = std::min(width, values.size());
  std::vector<double> means(buckets, std::numeric_limits<double>::quiet_NaN());
  for (size_t b = 0; b < buckets; ++b) {
    const size_t begin = b * values.size() / buckets, end = (b + 1) * values.size() / buckets;
    double sum = 0;
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) {
      if (std::isfinite(values[i])) sum += values[i], ++n;
    }
    if (n > 0) means[b] = sum / static_cast<double>(n);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double m : means) {
    if (std::isfinite(m)) lo = std::min(lo, m), hi = std::max(hi, m);
  }
  std::string out;
  for (double m : means) {
    if (!std::isfinite(m)) {
      out += " ";
      continue;
    }
    const double position = hi > lo ? (m - lo) / (hi - lo) : 0.5;
    out += kBlocks[std::min<size_t>(7, static_cast<size_t>(position * 8))];
  }
  return out;
}

}  // namespace engine::report
