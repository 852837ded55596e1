#include "engine/report/plots.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/compare_runs.hpp"
#include "engine/report/run_summary.hpp"

namespace engine::report {
namespace {

// Each run's legend entry: the hyperparameters that differ ("lr=0.1"), and its name and file
// when those do not tell the runs apart.
std::vector<std::string> run_labels(const std::vector<io::RunFile>& runs) {
  std::vector<std::string> labels;
  if (runs.size() == 1) {
    const std::string name = runs.front().text("name");
    return {name.empty() ? std::filesystem::path(runs.front().path).stem().string() : name};
  }
  const auto hparams = differing_hparams(runs);
  for (const auto& run : runs) {
    std::vector<std::string> parts;
    for (const auto& h : hparams) {
      const auto it = run.hparams.find(h);
      if (it != run.hparams.end()) parts.push_back(h + "=" + cell_text(cell_of(it->second)));
    }
    labels.push_back(core::join(parts, " "));
  }
  const std::set<std::string> distinct(labels.begin(), labels.end());
  const bool ambiguous = distinct.size() < labels.size() || distinct.count("");
  for (size_t i = 0; ambiguous && i < runs.size(); ++i) {
    const std::string file =
        runs[i].text("name") + " " + std::filesystem::path(runs[i].path).stem().string();
    labels[i] = labels[i].empty() ? file : labels[i] + " (" + file + ")";
  }
  return labels;
}

std::string axis_label(const std::string& column) {
  if (column == "batch_size") return "batch size (samples)";
  if (column == "world_size") return "processes";
  if (column == "throughput" || column == "throughput_per_rank") return column + " (samples/s)";
  if (column == "speedup") return "speedup (x)";
  if (column.size() > 3 && column.compare(column.size() - 3, 3, "_ms") == 0)
    return column.substr(0, column.size() - 3) + " batch time (ms)";
  return column;
}

size_t distinct_values(const Table& points, const std::string& column) {
  const int c = points.column(column);
  if (c < 0) return 0;
  std::set<std::string> values;
  for (const auto& row : points.rows) values.insert(cell_text(row[static_cast<size_t>(c)]));
  return values.size();
}

}  // namespace

std::vector<Chart> run_charts(const std::vector<io::RunFile>& runs) {
  const auto labels = run_labels(runs);
  struct Key {
    std::string split, metric;
    bool directed;
  };
  std::vector<Key> keys;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& run : runs) {
    for (const auto& s : summarize_series(run)) {
      if (seen.insert({s.split, s.metric}).second)
        keys.push_back({s.split, s.metric, s.better != Better::kNeither});
    }
  }
  // the metrics with a direction, outside the loader's bookkeeping, and the learning rate (what
  // a schedule did is half of reading a curve); everything when none has a direction
  const bool any_directed = std::any_of(
      keys.begin(), keys.end(), [](const Key& k) { return k.directed && k.split != "data"; });
  auto charted = [&](const Key& key) {
    if (key.split == "train" && key.metric == "lr") return true;
    return !any_directed || (key.directed && key.split != "data");
  };
  // a chart per metric, its splits (train and validation) as lines side by side; the learning
  // rate's last
  std::stable_partition(keys.begin(), keys.end(), [](const Key& k) { return k.metric != "lr"; });
  std::vector<std::string> metrics;
  std::map<std::string, std::vector<std::string>> splits_of;
  for (const auto& key : keys) {
    if (!charted(key)) continue;
    if (!splits_of.count(key.metric)) metrics.push_back(key.metric);
    splits_of[key.metric].push_back(key.split);
  }
  std::vector<Chart> charts;
  const auto order = [](const std::string& split) {
    return split == "train" ? 0 : split == "validation" ? 1 : split == "test" ? 2 : 3;
  };
  for (const auto& metric : metrics) {
    auto& splits = splits_of[metric];
    std::stable_sort(splits.begin(), splits.end(), [&](const std::string& a, const std::string& b) {
      return order(a) < order(b);
    });
    // a run keeps its colour in every split: the first (train) solid, the others dashed
    const std::vector<std::string> others(splits.begin() + 1, splits.end());
    Chart chart{others.empty() ? splits.front() + " " + metric
                               : metric + ": " + splits.front() + " solid, " +
                                     core::join(others, ", ") + " dashed",
                "step",
                metric,
                {},
                false,
                false};
    for (size_t r = 0; r < runs.size(); ++r) {
      for (const auto& split_name : splits) {
        const auto split = runs[r].metrics.find(split_name);
        if (split == runs[r].metrics.end()) continue;
        const auto series = split->second.series.find(metric);
        if (series == split->second.series.end()) continue;
        Line line{labels[r], {}, series->second};
        line.dashed = split_name != splits.front();
        for (int64_t step : split->second.step) line.x.push_back(static_cast<double>(step));
        chart.lines.push_back(std::move(line));
      }
    }
    charts.push_back(std::move(chart));
  }
  return charts;
}

std::vector<Chart> bench_charts(const Table& points, Pivot request, bool choose_x) {
  if (choose_x) {
    for (const char* column : {"batch_size", "threads", "world_size"}) {
      if (distinct_values(points, column) > 1) {
        request.cols = column;
        break;
      }
    }
  }
  // a point left out of the chart would be silently replaced by another: what tells points
  // apart (phase, device, dtype, seed, file) makes lines of its own
  request = split_shared_cells(points, request);
  const Table table = pivot(points, request);
  const size_t keys = request.rows.size();
  std::vector<double> xs;
  for (size_t c = keys; c < table.columns.size(); ++c) {
    const std::string text = table.columns[c].substr(request.cols.size() + 1);
    try {
      size_t used = 0;
      xs.push_back(std::stod(text, &used));
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception&) {
      throw core::UsageError("--plot draws the values of --cols " + request.cols +
                             " along the x axis, and '" + text +
                             "' is not a number: pick a numeric column (batch_size, threads, "
                             "world_size)");
    }
  }
  const bool log_x =
      !xs.empty() && *std::min_element(xs.begin(), xs.end()) > 0 &&
      *std::max_element(xs.begin(), xs.end()) >= 4 * *std::min_element(xs.begin(), xs.end());

  std::vector<Chart> charts;
  std::map<std::string, size_t> chart_of;
  for (const auto& row : table.rows) {
    const std::string group = cell_text(row[0]);
    auto [it, added] = chart_of.emplace(group, charts.size());
    if (added) {
      const std::string title = request.rows[0] == "model" ? group : request.rows[0] + " " + group;
      charts.push_back(
          Chart{title, axis_label(request.cols), axis_label(request.value), {}, log_x, true});
    }
    std::vector<std::string> rest;
    for (size_t k = 1; k < keys; ++k) {  // "threads=2" for a number, "training" for a word
      const bool word = std::holds_alternative<std::string>(row[k]);
      rest.push_back(word ? cell_text(row[k]) : request.rows[k] + "=" + cell_text(row[k]));
    }
    Line line{rest.empty() ? request.value : core::join(rest, " "), xs, {}};
    for (size_t c = keys; c < row.size(); ++c) {
      const auto* v = std::get_if<double>(&row[c]);
      line.y.push_back(v ? *v : NAN);
    }
    charts[it->second].lines.push_back(std::move(line));
  }
  return charts;
}

}  // namespace engine::report
