// From what a user names on the command line to the report it prints: files and folders
// (searched recursively) sorted out by kind, read, and turned into tables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/io/bench_file.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/search_file.hpp"
#include "engine/report/bench_report.hpp"
#include "engine/report/chart.hpp"
#include "engine/report/compare_runs.hpp"
#include "engine/report/table.hpp"

namespace engine::report {

struct ReportRequest {
  std::vector<std::string> inputs;  // files and folders
  Format format = Format::kText;
  Selection selection;         // applies to the runs' comparison and to benchmark points
  std::optional<Pivot> pivot;  // benchmark points pivoted instead of listed
  // --value a,b: a pivot table for each, in this order (empty: the pivot's own value)
  std::vector<std::string> values;
  bool compare = false;  // inputs are BEFORE and AFTER benchmark files
  bool choose_x = true;  // charts: x is what varies (no --cols given)
};

struct ResultFiles {
  std::vector<std::string> runs, benchmarks, searches;
};

// The result files the inputs name: files as given (an IoError or UsageError for one that is
// missing or of a kind the report does not read), folders searched recursively for run and
// benchmark files (checkpoints and other files passed over), each list in path order.
ResultFiles result_files(const std::vector<std::string>& inputs);

// One run file alone: its own report; several: their comparison. Benchmark files: their
// points, or the pivot. Both kinds: both tables. With `compare`, two benchmark files point
// by point (bench_compare.hpp).
// With `figure`, also the charts of what the tables show (plots.hpp): the selected runs'
// curves, the selected benchmark points against batch size or threads, titled by `figure`'s
// caller-set title or by what it shows.
Report make_report(const ReportRequest& request, Figure* figure = nullptr);

// Result files already read, as a folder's report shows them, nothing selected: the training
// runs compared, engine eval's files in a table of their own, every benchmark point, one
// leaderboard per search. The live page's tables (live_json.hpp).
struct ResultContents {
  std::vector<io::RunFile> runs;
  std::vector<io::BenchContents> benchmarks;
  std::vector<io::SearchContents> searches;
};
Report result_tables(const ResultContents& contents);

// Search files grouped as their leaderboards are (in this order): the shards of one job array
// (which agree on name, seed, searcher, overrides and script) together, every other file alone.
std::vector<std::vector<io::SearchContents>> search_groups(
    const std::vector<io::SearchContents>& searches);

// The run files of a search's trials (under its trials folder): its leaderboard shows them, a
// folder's comparison of runs does not list them again.
bool is_trial_of(const std::string& run_path, const std::string& search_path);

}  // namespace engine::report
