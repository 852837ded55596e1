// What a run file says at a glance: for every metric its last and best value with their
// steps, how long the run took and how far it got. The material of `engine report RUN.h5` and
// of the comparison of several runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/result_file.hpp"

namespace engine::report {

enum class Better { kSmaller, kLarger, kNeither };

// Which way a metric of a split improves: larger for accuracy, top<k>, precision, recall, F1
// and samples_per_second; smaller for losses and errors; neither for the learning rate, the
// loss scale and the loader's bookkeeping.
Better better_of(const std::string& split, const std::string& metric);

struct SeriesSummary {
  std::string split, metric;
  Better better = Better::kNeither;
  std::vector<double> values;
  size_t rows = 0;  // rows logged (NaN included)
  double last = 0;  // the last finite value (NaN when none)
  int64_t last_step = 0;
  double best = 0;  // the best finite value by `better` (NaN when none or kNeither)
  int64_t best_step = 0;
};

// Every series of every split, training and validation first, in name order within a split.
std::vector<SeriesSummary> summarize_series(const io::RunFile& run);

// The largest step any split logged, and the largest time (seconds since the run started).
int64_t steps_of(const io::RunFile& run);
double seconds_of(const io::RunFile& run);

}  // namespace engine::report
