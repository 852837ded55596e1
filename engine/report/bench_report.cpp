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
                                              "starved",
                                              "p50_ms",
                                              "mean_ms",
                                              "p90_ms",
                                              "throughput",
                                              "pipelined_ms",
                                              "throughput_pipelined",
                                              "throughput_per_rank",
                                              "scaling_efficiency",
                                              "peak_resident_mb",
                                              "cpu_percent",
                                              "gpu_percent",
                                              "reason"};

// The mean of a resource series the point's details summarise, or an empty cell.
Cell detail_number(const io::BenchPoint& point, const char* name) {
  const auto it = point.details.find(name);
  if (it == point.details.end()) return Cell{};
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  return Cell{};
}

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
                            r.starved ? Cell{std::string("starved")} : Cell{},
                            r.p50_ms,
                            r.mean_ms,
                            r.p90_ms,
                            r.throughput,
                            r.pipelined_ms,
                            r.throughput_pipelined,
                            r.throughput_per_rank,
                            r.scaling_efficiency,
                            r.peak_resident_bytes > 0
                                ? Cell{static_cast<double>(r.peak_resident_bytes) / (1 << 20)}
                                : Cell{},
                            detail_number(p, "cpu_percent_mean"),
                            detail_number(p, "gpu_percent_mean"),
                            r.reason};
      const auto na = p.details.find("not_applicable");
      const std::string not_applicable =
          na != p.details.end() && std::holds_alternative<std::string>(na->second)
              ? ", " + std::get<std::string>(na->second)
              : std::string();
      for (const auto& name : extra) {
        const auto it = p.parameters.find(name);
        // a setting that cannot apply to the point's device or phase (cudnn_benchmark on a CPU)
        if (not_applicable.find(", " + name + " (") != std::string::npos) {
          row.push_back(std::string("n/a"));
        } else {
          row.push_back(it == p.parameters.end() ? Cell{} : cell_of(it->second));
        }
      }
      t.rows.push_back(std::move(row));
    }
  }
  size_t points = 0, superlinear = 0;
  for (const auto& file : files) {
    points += file.points.size();
    for (const auto& p : file.points) superlinear += p.row.scaling_efficiency > 1.0 + 1e-9;
  }
  t.title = std::to_string(points) + " benchmark point" + (points == 1 ? "" : "s") + " in " +
            std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s");
  if (superlinear > 0) {
    t.title += "; scaling_efficiency ABOVE 1 (more than linear: check it against the noise) at " +
               std::to_string(superlinear) + " point" + (superlinear == 1 ? "" : "s");
  }
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

// The columns that may tell apart points that share a pivot cell: the points' parameters (the
// row's first columns after file and point, and every column after reason), then the file.
bool result_column(const std::string& name) {
  static const std::set<std::string> parameters = {"model",      "phase",      "device", "dtype",
                                                   "batch_size", "world_size", "threads"};
  return std::find(kRowColumns.begin(), kRowColumns.end(), name) != kRowColumns.end() &&
         !parameters.count(name);
}

// The rows of `points` grouped by their values in `columns`, as one text key each.
std::map<std::string, std::vector<size_t>> groups_by(const Table& points,
                                                     const std::vector<size_t>& columns) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t r = 0; r < points.rows.size(); ++r) {
    std::string key;
    for (size_t c : columns) key += cell_text(points.rows[r][c]) + '\x1f';
    groups[key].push_back(r);
  }
  return groups;
}

bool varies_within(const Table& points, const std::map<std::string, std::vector<size_t>>& groups,
                   size_t column) {
  for (const auto& [_, rows] : groups) {
    for (size_t r : rows) {
      if (!same_cell(points.rows[r][column], points.rows[rows.front()][column])) return true;
    }
  }
  return false;
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

// Efficiency above 1 (100%) is flagged, not capped as DLBS does: more than linear scaling is
// usually noise or a cache effect, and the figure should be looked at.
std::string superlinear_note(const Table& pivoted, const Pivot& request) {
  if (request.value != "efficiency" && request.value != "scaling_efficiency") return "";
  std::vector<std::string> where;
  const size_t keys = request.rows.size();
  for (const auto& row : pivoted.rows) {
    for (size_t c = keys; c < row.size(); ++c) {
      const auto v = number_in(row[c]);
      if (!v || *v <= 1.0 + 1e-9) continue;
      std::vector<std::string> key;
      for (size_t k = 0; k < keys; ++k) key.push_back(cell_text(row[k]));
      where.push_back(core::join(key, " ") + " " + pivoted.columns[c] + " (" + number_text(*v) +
                      ")");
    }
  }
  if (where.empty()) return "";
  return "; ABOVE 1 (more than linear: check it against the noise): " + core::join(where, ", ");
}

}  // namespace

Pivot split_shared_cells(const Table& points, Pivot request) {
  if (request.rows.empty()) throw core::UsageError("--rows names no column");
  std::vector<size_t> key;
  for (const auto& name : request.rows) key.push_back(column_or_fail(points, name, "--rows"));
  key.push_back(column_or_fail(points, request.cols, "--cols"));
  std::vector<std::string> candidates;
  for (const auto& name : points.columns) {
    if (!result_column(name)) candidates.push_back(name);
  }
  candidates.push_back("file");
  for (const auto& name : candidates) {
    std::map<std::string, std::vector<size_t>> shared;
    for (auto& [group, rows] : groups_by(points, key)) {
      if (rows.size() > 1) shared[group] = std::move(rows);
    }
    if (shared.empty()) return request;
    if (points.column(name) < 0) continue;
    const size_t column = static_cast<size_t>(points.column(name));
    if (std::find(key.begin(), key.end(), column) != key.end()) continue;
    if (!varies_within(points, shared, column)) continue;
    request.rows.push_back(name);
    request.split_by.push_back(name);
    key.insert(key.end() - 1, column);
  }
  for (const auto& [group, rows] : groups_by(points, key)) {
    if (rows.size() < 2) continue;
    const auto text = [&](size_t row, const char* column) {
      const int c = points.column(column);
      return c < 0 ? std::string("?") : cell_text(points.rows[row][static_cast<size_t>(c)]);
    };
    throw core::UsageError("points " + text(rows[0], "point") + " and " + text(rows[1], "point") +
                           " of " + text(rows[1], "file") +
                           " have the same parameters: no column tells them apart in the pivot");
  }
  return request;
}

Table pivot(const Table& points, const Pivot& asked) {
  const Pivot request = split_shared_cells(points, asked);
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
      (derived ? " (against the first " + request.cols + " of each row)" : "") +
      (request.split_by.empty() ? ""
                                : "; rows split by " + core::join(request.split_by, ", ") +
                                      ", which tells apart points that would share a cell") +
      superlinear_note(t, request);
  return t;
}

}  // namespace engine::report
