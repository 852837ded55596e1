#include "engine/report/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/report/cells.hpp"

namespace engine::report {
namespace {

// The columns every point has, from its /results row.
const std::vector<std::string> kRowColumns = {"file",
                                              "point",
                                              "model",
                                              "phase",
                                              "device",
                                              "dtype",
                                              "batch_size",
                                              "world_size",
                                              "threads",
                                              "status",
                                              "p50_ms",
                                              "mean_ms",
                                              "p90_ms",
                                              "throughput",
                                              "throughput_per_rank",
                                              "scaling_efficiency",
                                              "peak_resident_mb",
                                              "reason"};

std::optional<double> number_in(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    if (std::isfinite(*d)) return *d;
  }
  return std::nullopt;
}

size_t column_or_fail(const Table& table, const std::string& name, const std::string& flag) {
  const int c = table.column(name);
  if (c < 0) {
    throw core::UsageError(flag + ": no column '" + name + "' in the benchmark points (columns: " +
                           core::join(table.columns, ", ") + ")");
  }
  return static_cast<size_t>(c);
}

// Column values in the order a reader expects: numbers ascending, then words.
bool column_order(const Cell& a, const Cell& b) {
  const auto x = number_in(a), y = number_in(b);
  if (x && y) return *x < *y;
  if (x || y) return bool(x);
  return cell_text(a) < cell_text(b);
}

}  // namespace

std::vector<std::string> split_columns(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Table bench_points(const std::vector<io::BenchContents>& files) {
  Table t{"points", "", kRowColumns, {}};
  std::set<std::string> extra;  // parameters beyond the row's columns
  for (const auto& file : files) {
    for (const auto& p : file.points) {
      for (const auto& [name, _] : p.parameters) {
        if (std::find(kRowColumns.begin(), kRowColumns.end(), name) == kRowColumns.end()) {
          extra.insert(name);
        }
      }
    }
  }
  t.columns.insert(t.columns.end(), extra.begin(), extra.end());
  for (const auto& file : files) {
    for (const auto& p : file.points) {
      const auto& r = p.row;
      std::vector<Cell> row{file.path,
                            r.point,
                            r.model,
                            r.phase,
                            r.device,
                            r.dtype,
                            r.batch_size,
                            r.world_size,
                            r.threads,
                            std::string(core::name_of(r.status)),
                            r.p50_ms,
                            r.mean_ms,
                            r.p90_ms,
                            r.throughput,
                            r.throughput_per_rank,
                            r.scaling_efficiency,
                            r.peak_resident_bytes > 0
                                ? Cell{static_cast<double>(r.peak_resident_bytes) / (1 << 20)}
                                : Cell{},
                            r.reason};
      for (const auto& name : extra) {
        const auto it = p.parameters.find(name);
        row.push_back(it == p.parameters.end() ? Cell{} : cell_of(it->second));
      }
      t.rows.push_back(std::move(row));
    }
  }
  size_t points = 0;
  for (const auto& file : files) points += file.points.size();
  t.title = std::to_string(points) + " benchmark point" + (points == 1 ? "" : "s") + " in " +
            std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s");
  return t;
}

namespace {

// The pivot's cells before they are laid out: its distinct row keys and column values in order
// of appearance, and the value of each (key, column) that an ok point measured.
struct PivotCells {
  std::vector<std::vector<Cell>> keys;
  std::vector<Cell> col_values;
  std::map<std::pair<size_t, size_t>, double> values;
};

bool same_cell(const Cell& a, const Cell& b) {
  return cell_text(a) == cell_text(b);
}

bool same_key(const std::vector<Cell>& a, const std::vector<Cell>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_cell(a[i], b[i])) return false;
  }
  return true;
}

template <typename Item, typename Equal>
size_t index_in(std::vector<Item>& list, const Item& item, Equal equal) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (equal(list[i], item)) return i;
  }
  list.push_back(item);
  return list.size() - 1;
}

PivotCells collect_cells(const Table& points, const Pivot& request, bool derived) {
  std::vector<size_t> key_columns;
  for (const auto& name : request.rows)
    key_columns.push_back(column_or_fail(points, name, "--rows"));
  const size_t col = column_or_fail(points, request.cols, "--cols");
  const size_t value = column_or_fail(points, derived ? "throughput" : request.value, "--value");
  const size_t status = column_or_fail(points, "status", "--value");
  PivotCells cells;
  for (const auto& row : points.rows) {
    std::vector<Cell> key;
    for (size_t c : key_columns) key.push_back(row[c]);
    const size_t k = index_in(cells.keys, key, same_key);
    if (cell_text(row[status]) != "ok") continue;
    const auto v = number_in(row[value]);
    if (!v) continue;
    cells.values[{k, index_in(cells.col_values, row[col], same_cell)}] = *v;
  }
  return cells;
}

// One pivot row's cells in column order; speedup and efficiency against the row's first
// measured column.
std::vector<Cell> pivot_row(const PivotCells& cells, size_t k, const std::vector<size_t>& order,
                            const Pivot& request, bool derived) {
  std::vector<Cell> row = cells.keys[k];
  std::optional<double> base, base_col;
  for (size_t i : order) {
    const auto it = cells.values.find({k, i});
    if (it != cells.values.end()) {
      base = it->second;
      base_col = number_in(cells.col_values[i]);
      break;
    }
  }
  for (size_t i : order) {
    const auto it = cells.values.find({k, i});
    if (it == cells.values.end()) {
      row.push_back(Cell{});
      continue;
    }
    double v = it->second;
    if (derived) v /= *base;
    if (request.value == "efficiency") {
      const auto here = number_in(cells.col_values[i]);
      if (!here || !base_col || *base_col <= 0) {
        throw core::UsageError(
            "--value efficiency needs numeric columns (threads, world_size, "
            "batch_size), and --cols " +
            request.cols + " has '" + cell_text(cells.col_values[i]) + "'");
      }
      v /= *here / *base_col;
    }
    row.push_back(v);
  }
  return row;
}

}  // namespace

Table pivot(const Table& points, const Pivot& request) {
  if (request.rows.empty()) throw core::UsageError("--rows names no column");
  const bool derived = request.value == "speedup" || request.value == "efficiency";
  const PivotCells cells = collect_cells(points, request, derived);
  std::vector<size_t> order(cells.col_values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return column_order(cells.col_values[a], cells.col_values[b]);
  });

  Table t{"pivot", "", request.rows, {}};
  for (size_t i : order) t.columns.push_back(request.cols + "=" + cell_text(cells.col_values[i]));
  for (size_t k = 0; k < cells.keys.size(); ++k) {
    t.rows.push_back(pivot_row(cells, k, order, request, derived));
  }
  t.title =
      request.value + " by " + core::join(request.rows, ", ") + " and " + request.cols +
      (request.value == "throughput" ? " (samples/s)" : "") +
      (request.value.size() > 3 && request.value.compare(request.value.size() - 3, 3, "_ms") == 0
           ? " (ms)"
           : "") +
      (derived ? " (against the first " + request.cols + " of each row)" : "");
  return t;
}

}  // namespace engine::report
