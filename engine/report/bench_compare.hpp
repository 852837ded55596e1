// `engine report --compare BEFORE.h5 AFTER.h5`: two benchmark files point by point (matched
// on their parameters), the change in p50 batch time and throughput, and a verdict that calls
// a change a regression or an improvement only when it exceeds the noise of the stored batch
// times — so that a libtorch upgrade or a code change can be checked across a whole sweep.
#pragma once

#include <vector>

#include "engine/io/bench_file.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// How far a p50 can move by chance: the half-width of the median's 95% interval from the
// batch times (McGill, Tukey and Larsen's notch, 1.58 IQR / sqrt(n)), or half the spread of
// the repeats' p50s when the point ran in several processes, whichever is larger. NaN without
// batch times.
double p50_noise_ms(const io::BenchPoint& point);

// One row per point of either file: its parameters (model, phase, device, dtype, batch_size,
// world_size, threads), p50 before and after, its change in percent, throughput before and
// after and its change, the noise (percent of the p50 before) and the verdict: regression,
// improvement, within noise, or only before / only after / not ok.
Table compare_benchmarks(const io::BenchContents& before, const io::BenchContents& after);

}  // namespace engine::report
