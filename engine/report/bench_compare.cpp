#include "engine/report/bench_compare.hpp"
#include "engine/core/statuses.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace engine::report {
namespace {

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto low = static_cast<size_t>(std::floor(position));
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

// The points' identity: their parameters' hash, stored with each point.
std::string key_of(const io::BenchPoint& p) {
  if (!p.row.point_id.empty()) return p.row.point_id;
  return p.row.model + "/" + p.row.phase + "/" + p.row.device + "/" + p.row.dtype + "/" +
         std::to_string(p.row.batch_size) + "/" + std::to_string(p.row.world_size) + "/" +
         std::to_string(p.row.threads);
}

double percent_change(double before, double after) {
  return 100.0 * (after - before) / before;
}

}  // namespace

double p50_noise_ms(const io::BenchPoint& point) {
  const auto& ms = point.batch_ms;
  if (ms.size() < 2) return std::nan("");
  const double iqr = quantile(ms, 0.75) - quantile(ms, 0.25);
  double noise = 1.58 * iqr / std::sqrt(static_cast<double>(ms.size()));
  // several processes: their p50s differ by more than one process's batches say
  std::map<int64_t, std::vector<double>> by_repeat;
  for (size_t i = 0; i < ms.size() && i < point.batch_repeat.size(); ++i) {
    by_repeat[point.batch_repeat[i]].push_back(ms[i]);
  }
  if (by_repeat.size() > 1) {
    std::vector<double> medians;
    for (const auto& [_, values] : by_repeat) medians.push_back(quantile(values, 0.5));
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    noise = std::max(noise, (*hi - *lo) / 2);
  }
  return noise;
}

Table compare_benchmarks(const io::BenchContents& before, const io::BenchContents& after) {
  Table t{"comparison",
          "",
          {"model", "phase", "device", "dtype", "batch_size", "world_size", "threads",
           "p50_ms before", "p50_ms after", "p50 change %", "throughput before", "throughput after",
           "throughput change %", "noise %", "verdict"},
          {}};
  std::map<std::string, const io::BenchPoint*> earlier;
  for (const auto& p : before.points) earlier[key_of(p)] = &p;
  std::map<std::string, bool> matched;
  int regressions = 0, improvements = 0, same = 0;
  const auto identity = [](const io::BenchPoint& p) {
    const auto& r = p.row;
    return std::vector<Cell>{r.model,      r.phase,      r.device, r.dtype,
                             r.batch_size, r.world_size, r.threads};
  };
  for (const auto& p : after.points) {
    auto row = identity(p);
    const auto it = earlier.find(key_of(p));
    if (it == earlier.end()) {
      row.insert(row.end(), {Cell{}, p.row.p50_ms, Cell{}, Cell{}, p.row.throughput, Cell{}, Cell{},
                             std::string("only after")});
      t.rows.push_back(std::move(row));
      continue;
    }
    matched[it->first] = true;
    const auto& b = *it->second;
    if (b.row.status != core::PointStatus::kOk || p.row.status != core::PointStatus::kOk) {
      row.insert(row.end(), {b.row.p50_ms, p.row.p50_ms, Cell{}, b.row.throughput, p.row.throughput,
                             Cell{}, Cell{},
                             std::string("not ok: ") + core::name_of(b.row.status) + " -> " +
                                 core::name_of(p.row.status)});
      t.rows.push_back(std::move(row));
      continue;
    }
    // the two medians differ when their intervals do not overlap
    const double noise = p50_noise_ms(b) + p50_noise_ms(p);
    const double delta = p.row.p50_ms - b.row.p50_ms;
    std::string verdict = "within noise";
    if (b.row.starved || p.row.starved) {
      // its times are the machine's load: left out of the count either way
      verdict = std::string("not compared: starved ") + (b.row.starved ? "before" : "after");
    } else if (std::isnan(noise)) {
      verdict = "no batch times";
    } else if (delta > noise) {
      verdict = "regression";
      ++regressions;
    } else if (delta < -noise) {
      verdict = "improvement";
      ++improvements;
    } else {
      ++same;
    }
    row.insert(row.end(), {b.row.p50_ms, p.row.p50_ms, percent_change(b.row.p50_ms, p.row.p50_ms),
                           b.row.throughput, p.row.throughput,
                           percent_change(b.row.throughput, p.row.throughput),
                           100.0 * noise / b.row.p50_ms, verdict});
    t.rows.push_back(std::move(row));
  }
  for (const auto& p : before.points) {
    if (matched.count(key_of(p))) continue;
    auto row = identity(p);
    row.insert(row.end(), {p.row.p50_ms, Cell{}, Cell{}, p.row.throughput, Cell{}, Cell{}, Cell{},
                           std::string("only before")});
    t.rows.push_back(std::move(row));
  }
  t.title = before.path + " -> " + after.path + ": " + std::to_string(regressions) + " regression" +
            (regressions == 1 ? "" : "s") + ", " + std::to_string(improvements) + " improvement" +
            (improvements == 1 ? "" : "s") + ", " + std::to_string(same) + " within noise";
  return t;
}

}  // namespace engine::report
