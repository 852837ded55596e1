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
// scaling_efficiency, peak memory, reason; then the points' other parameters, by name.
Table bench_points(const std::vector<io::BenchContents>& files);

struct Pivot {
  std::vector<std::string> rows{"model"};  // columns of bench_points that name a row
  std::string cols = "batch_size";         // the column whose values become columns
  std::string value = "throughput";        // a numeric column, or speedup or efficiency
};

// `points` pivoted: one row per distinct `rows` key, one column per distinct `cols` value (in
// numeric order when they are numbers), the `value` of the ok point there (the last one when
// several files hold it). A UsageError names a column that does not exist.
Table pivot(const Table& points, const Pivot& pivot);

// "model,phase" -> {"model", "phase"}
std::vector<std::string> split_columns(const std::string& text);

}  // namespace engine::report
