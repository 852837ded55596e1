// Benchmark files as tables: every point of one or several sweeps, and DLBS's four views of
// them pivoted as a user asks — batch time, throughput, speedup (against the pivot row's
// first column: the smallest batch, one thread, one rank) and efficiency (the speedup over the
// growth of that column) — e.g. rows model, columns batch_size, value throughput.
#pragma once

#include <string>
#include <vector>

#include "engine/io/bench_file.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// One row per point of every file: file, point, model, phase, device, dtype, batch_size,
// world_size, threads, status, p50_ms, mean_ms, p90_ms, throughput, throughput_per_rank,
// scaling_efficiency, peak memory, the resource monitor's mean CPU share (cpu_percent: 100 is one
// core busy) and GPU utilisation (gpu_percent), reason; then the points' other parameters.
Table bench_points(const std::vector<io::BenchContents>& files);

struct Pivot {
  std::vector<std::string> rows{"model"};  // columns of bench_points that name a row
  std::string cols = "batch_size";         // the column whose values become columns
  std::string value = "throughput";        // a numeric column, or speedup or efficiency
  std::vector<std::string> split_by;       // rows added by split_shared_cells
};

// The pivot with the rows that keep every point in a cell of its own: where several points
// would share a (rows, cols) cell (two phases, two seeds, one point in two files), the first
// column that tells them apart (a parameter, in the table's order, then the file) becomes
// another row column, until none share. Points with the same parameters in one file: a
// UsageError naming them.
Pivot split_shared_cells(const Table& points, Pivot pivot);

// `points` pivoted: one row per distinct `rows` key (split as split_shared_cells says, and the
// title names the columns added), one column per distinct `cols` value (in numeric order when
// they are numbers), the `value` of the ok point there. An efficiency above 1 is named in the
// title. A UsageError names a column that does not exist.
Table pivot(const Table& points, const Pivot& pivot);

// "model,phase" -> {"model", "phase"}
std::vector<std::string> split_columns(const std::string& text);

}  // namespace engine::report
