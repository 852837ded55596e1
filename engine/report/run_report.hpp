// `engine report RUN.h5`: one run's facts (script, status, duration, world), its
// hyperparameters, every metric's last and best value with a sparkline of its course, and its
// checkpoints.
#pragma once

#include "engine/io/result_file.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

// Tables "run", "hparams", "metrics" (the main one) and "checkpoints". `sparklines` adds the
// course of each metric as a column (for the terminal and Markdown, not for CSV or JSON).
Report run_report(const io::RunFile& run, bool sparklines);

}  // namespace engine::report
