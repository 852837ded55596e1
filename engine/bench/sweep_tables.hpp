// What a sweep prints and stores as text: its plan (--dry-run's table, the file's plan
// lines), each point's progress and result lines, and the results table at its end.
#pragma once

#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"
#include "engine/io/bench_file.hpp"

namespace engine::bench {

// The parameters that differ between points of the plan (model first), for progress lines.
std::vector<std::string> varying_parameters(const std::vector<PlannedPoint>& plan);
// "resnet50 batch_size=64": the point's values of `names`.
std::string point_description(const PlannedPoint& p, const std::vector<std::string>& names);
// "ok: p50 ... samples/s, peak ... MiB", or "failed: why".
std::string point_result_line(const io::BenchRow& row);
// "p90 1.021<unit>, p99 1.198<unit>, ": the tail percentiles that enough batches back (NaN
// ones are left out; bench/timing.hpp), each followed by ", ".
std::string tail_percentiles_text(double p90_ms, double p99_ms, const std::string& unit = "");
// " (p99 needs 100 batches)", " (p90 needs 10 batches, p99 100)": what was left out for want
// of batches; empty when nothing was.
std::string percentiles_note(int64_t batches);
// "data 0.120 + forward 0.310 + backward 0.520 + optimizer 0.090 ms (means)", the parts the
// row has; empty when it has none.
std::string parts_text(const io::BenchRow& row);

// The table printed at the end: model, phase, batch, dtype, threads, the other settings that
// vary (when there are any), mean ms, p90 ms, samples/s, status, reason.
std::string results_table(const std::vector<io::BenchRow>& rows,
                          const std::vector<std::string>& settings = {});
// The plan as --dry-run prints it: each point's number, the parameters that vary across the
// plan, whether it runs, and what made it.
std::string plan_table(const std::vector<PlannedPoint>& plan);
// The plan as the file stores it: one line per point, "<id> <active|inactive> k=v, ...".
std::string plan_text(const std::vector<PlannedPoint>& plan);

}  // namespace engine::bench
