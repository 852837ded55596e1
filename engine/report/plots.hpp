// The charts of `engine report --plot`: training curves of runs (a chart per split and metric,
// every run a line), and benchmark points as a value (throughput) against batch size, threads
// or processes (a chart per model, a line per the other row keys).
#pragma once

#include <vector>

#include "engine/io/result_file.hpp"
#include "engine/report/bench_report.hpp"
#include "engine/report/chart.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// A chart per split and metric that has a direction (losses, accuracies, throughput; not the
// learning rate's bookkeeping unless nothing else was logged), against the step. Each run is a
// line labelled by the hyperparameters that tell the runs apart (its name when one run).
std::vector<Chart> run_charts(const std::vector<io::RunFile>& runs);

// `points` (bench_points) as pivot() arranges them: a chart per value of the first `rows`
// column, a line per value of the others, x the `cols` column, y the `value`. With
// `choose_x`, x is the first of batch_size, threads and world_size that takes several values.
// The phase, device and dtype join the rows when they vary, so that no point hides another.
// A UsageError when x is not a number.
std::vector<Chart> bench_charts(const Table& points, Pivot pivot, bool choose_x);

}  // namespace engine::report
