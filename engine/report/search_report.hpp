// Search files as a table and charts: the leaderboard of every trial (several files, e.g. the
// shards of one search, merged), best first by the searched metric, and each searched
// hyperparameter against that metric.
#pragma once

#include <vector>

#include "engine/io/search_file.hpp"
#include "engine/report/chart.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// Columns: rank, trial, status, rung, the searched metric, the searched hyperparameters,
// restarts, reason, run file (and file, when several). Finished trials by their metric (best
// first; NaN last), then the others.
Table leaderboard(const std::vector<io::SearchContents>& searches);

// A chart per numeric searched hyperparameter: the metric of every finished trial against
// its value (dots, a colour per ASHA rung; a base-2 axis when the values span a factor of 4 or
// more and are > 0).
std::vector<Chart> search_charts(const std::vector<io::SearchContents>& searches);

}  // namespace engine::report
