#include "engine/bench/sweep_tables.hpp"
#include "engine/core/statuses.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "engine/bench/parameters.hpp"
#include "engine/bench/timing.hpp"
#include "engine/core/format.hpp"

namespace engine::bench {

using io::BenchRow;

std::vector<std::string> varying_parameters(const std::vector<PlannedPoint>& plan) {
  std::vector<std::string> names;
  if (plan.empty()) return names;
  for (const auto& [name, value] : plan.front().params) {
    const bool varies = std::any_of(
        plan.begin(), plan.end(), [&, &key = name, &first = value](const PlannedPoint& p) {
          const auto it = p.params.find(key);
          return it == p.params.end() || !values_equal(it->second, first);
        });
    if ((varies && name != "enabled") || name == "model") names.push_back(name);
  }
  std::stable_partition(names.begin(), names.end(), [](const auto& n) { return n == "model"; });
  return names;
}

std::string point_description(const PlannedPoint& p, const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    const auto value = param_text(p.params, name);
    if (value.empty()) continue;
    if (!text.empty()) text += " ";
    text += name == "model" ? value : name + "=" + value;
  }
  return text;
}

std::string tail_percentiles_text(double p90_ms, double p99_ms, const std::string& unit) {
  std::string text;
  char number[64];
  for (const auto& [name, value] : {std::pair{"p90", p90_ms}, std::pair{"p99", p99_ms}}) {
    if (std::isnan(value)) continue;
    std::snprintf(number, sizeof number, "%s %.3f%s, ", name, value, unit.c_str());
    text += number;
  }
  return text;
}

std::string percentiles_note(int64_t batches) {
  if (batches >= kBatchesForP99) return "";
  if (batches >= kBatchesForP90)
    return " (p99 needs " + std::to_string(kBatchesForP99) + " batches)";
  return " (p90 needs " + std::to_string(kBatchesForP90) + " batches, p99 " +
         std::to_string(kBatchesForP99) + ")";
}

std::string point_result_line(const BenchRow& row) {
  if (row.status == core::PointStatus::kOk) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "ok: p50 %.3f ms, mean %.3f ms, %s%.1f samples/s, peak %.0f MiB", row.p50_ms,
                  row.mean_ms, tail_percentiles_text(row.p90_ms, NAN, " ms").c_str(),
                  row.throughput, static_cast<double>(row.peak_resident_bytes) / (1 << 20));
    std::string line = text;
    if (row.peak_device_bytes > 0) {
      line +=
          ", device peak " +
          core::number_string(std::round(static_cast<double>(row.peak_device_bytes) / (1 << 20))) +
          " MiB";
    }
    const std::string parts = parts_text(row);
    if (!parts.empty()) line += "; " + parts;
    if (row.repeats > 1) {
      line += ", " + std::to_string(row.repeats) + " repeats spread " +
              core::number_string(std::round(row.p50_spread * 1000) / 10) + "%";
      if (row.unstable) line += " UNSTABLE";
    }
    return line;
  }
  return std::string(core::name_of(row.status)) + ": " + row.reason;
}

std::string parts_text(const BenchRow& row) {
  std::string text;
  const std::pair<const char*, double> parts[] = {{"data", row.data_ms},
                                                  {"forward", row.forward_ms},
                                                  {"backward", row.backward_ms},
                                                  {"optimizer", row.optimizer_ms}};
  for (const auto& [name, ms] : parts) {
    if (std::isnan(ms)) continue;
    char one[64];
    std::snprintf(one, sizeof one, "%s%s %.3f", text.empty() ? "" : " + ", name, ms);
    text += one;
  }
  return text.empty() ? text : text + " ms (means)";
}

std::string results_table(const std::vector<io::BenchRow>& rows,
                          const std::vector<std::string>& settings) {
  size_t width = 0;
  for (const auto& text : settings) width = std::max(width, text.size());
  if (width > 0) width = std::max<size_t>(width, 8);
  const int w = static_cast<int>(width);
  std::string out;
  char line[1024];
  // data-parallel points: their processes, and the world's samples/s against one process's
  const bool parallel =
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.world_size > 1; });
  const std::string procs_head = parallel ? "  procs" : "";
  const std::string efficiency_head = parallel ? " efficiency" : "";
  std::snprintf(line, sizeof line, "%-16s %-14s %6s %-8s %7s%s %s%-*s%10s %10s %12s%s %-8s %s\n",
                "model", "phase", "batch", "dtype", "threads", procs_head.c_str(), width ? " " : "",
                w, width ? "settings" : "", "mean ms", "p90 ms", "samples/s",
                efficiency_head.c_str(), "status", "reason");
  out += line;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const bool ok = r.status == core::PointStatus::kOk;
    auto number = [ok](double v, const char* format) {
      char text[32];
      if (!ok || std::isnan(v)) return std::string("-");
      std::snprintf(text, sizeof text, format, v);
      return std::string(text);
    };
    std::string status = core::name_of(r.status);
    if (r.unstable) status += "*";
    const std::string setting = i < settings.size() ? settings[i] : "";
    char procs[16] = "", efficiency[24] = "";
    if (parallel) {
      std::snprintf(procs, sizeof procs, " %6lld", static_cast<long long>(r.world_size));
      std::snprintf(efficiency, sizeof efficiency, " %10s",
                    number(100 * r.scaling_efficiency, "%.0f%%").c_str());
    }
    std::snprintf(
        line, sizeof line, "%-16s %-14s %6lld %-8s %7lld%s %s%-*s%10s %10s %12s%s %-8s %s\n",
        r.model.c_str(), r.phase.c_str(), static_cast<long long>(r.batch_size), r.dtype.c_str(),
        static_cast<long long>(r.threads), procs, width ? " " : "", w, setting.c_str(),
        number(r.mean_ms, "%.3f").c_str(), number(r.p90_ms, "%.3f").c_str(),
        number(r.throughput, "%.1f").c_str(), efficiency, status.c_str(), r.reason.c_str());
    out += line;
  }
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.unstable; })) {
    out += "ok*: the repeats' p50s spread more than the limit (--unstable_spread): unstable\n";
  }
  if (parallel) {
    out +=
        "batch: per process; samples/s: all processes together; efficiency: samples/s over "
        "procs x the one-process point's (same batch per process, else same global batch)\n";
  }
  return out;
}

std::string plan_table(const std::vector<PlannedPoint>& plan) {
  const auto names = varying_parameters(plan);
  std::vector<size_t> width;
  for (const auto& name : names) {
    size_t w = name.size();
    for (const auto& p : plan) w = std::max(w, param_text(p.params, name).size());
    width.push_back(w);
  }
  std::string out;
  char cell[512];
  std::snprintf(cell, sizeof cell, "%4s  ", "#");
  out += cell;
  for (size_t n = 0; n < names.size(); ++n) {
    std::snprintf(cell, sizeof cell, "%-*s  ", static_cast<int>(width[n]), names[n].c_str());
    out += cell;
  }
  out += "runs      made by\n";
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& p = plan[i];
    std::snprintf(cell, sizeof cell, "%4zu  ", i + 1);
    out += cell;
    for (size_t n = 0; n < names.size(); ++n) {
      std::snprintf(cell, sizeof cell, "%-*s  ", static_cast<int>(width[n]),
                    param_text(p.params, names[n]).c_str());
      out += cell;
    }
    out += p.active ? "yes       " : "inactive  ";
    out += p.made_by;
    if (!p.active) out += "; " + p.inactive_reason;
    out += "\n";
  }
  size_t active = 0;
  for (const auto& p : plan) active += p.active ? 1 : 0;
  out += std::to_string(plan.size()) + " points, " + std::to_string(active) + " to run, " +
         std::to_string(plan.size() - active) + " inactive\n";
  return out;
}

std::string plan_text(const std::vector<PlannedPoint>& plan) {
  std::string out;
  for (const auto& p : plan) {
    out += p.id + " " + (p.active ? "active" : "inactive") + " " + point_text(p.params) + "\n";
  }
  return out;
}

}  // namespace engine::bench
