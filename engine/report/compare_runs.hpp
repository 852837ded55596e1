// `engine report RUN.h5 RUN2.h5 ...` or a folder: one row per run with the hyperparameters
// that differ between the runs and every metric's final and best value, so that "which run
// had the best validation accuracy, and with what learning rate?" is one sorted table.
#pragma once

#include <string>
#include <vector>

#include "engine/io/result_file.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

struct Selection {
  std::string sort;                  // a column; best first for metrics, ascending otherwise
  std::vector<std::string> filters;  // "lr<0.1", "status=completed", "model!=mlp": all must hold
  int64_t last = 0;                  // only the N most recently started runs (0: all)
};

// The hyperparameters that tell the runs apart: those whose value (or presence) differs;
// every one of a single run's.
std::vector<std::string> differing_hparams(const std::vector<io::RunFile>& runs);

// Columns: run (the file), name, status, started, the hyperparameters whose values differ,
// steps, seconds, then per split and metric "<split>.<metric>" (the last value) and
// "<split>.<metric>.best"; only the `last` most recently started runs when it is set.
Table compare_runs(const std::vector<io::RunFile>& runs, int64_t last = 0);

// Keeps the rows of each table that pass the filters and sorts them (see Selection). A filter
// or the sort applies to the tables that have its column; a UsageError names one that no table
// has, or that is not COLUMN OP VALUE. A title "N things" becomes "n of N things".
void select_rows(const std::vector<Table*>& tables, const Selection& selection);

}  // namespace engine::report
