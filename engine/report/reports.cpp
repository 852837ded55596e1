#include "engine/report/reports.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/io/bench_file.hpp"
#include "engine/io/result_file.hpp"
#include "engine/io/search_file.hpp"
#include "engine/report/bench_compare.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/plots.hpp"
#include "engine/report/run_report.hpp"
#include "engine/report/search_importance.hpp"
#include "engine/report/search_report.hpp"

namespace engine::report {
namespace {

namespace fs = std::filesystem;

// The directions a run's script declared for its own metrics (RunInfo::metric_directions), so
// that "best" in the tables and charts agrees with the trainer's.
void declare_directions(const io::RunFile& run) {
  for (const auto& [attribute, larger] :
       {std::pair{"maximized_metrics", true}, std::pair{"minimized_metrics", false}}) {
    std::string names = run.text(attribute);
    size_t start = 0;
    while (start < names.size()) {
      const size_t comma = std::min(names.find(',', start), names.size());
      if (comma > start) core::declare_direction(names.substr(start, comma - start), larger);
      start = comma + 1;
    }
  }
}

bool checkpoint_name(const fs::path& path) {
  return path.filename().string().rfind("ckpt-", 0) == 0;
}

void add(ResultFiles& files, io::ResultKind kind, const std::string& path) {
  if (kind == io::ResultKind::kRun) files.runs.push_back(path);
  if (kind == io::ResultKind::kBenchmark) files.benchmarks.push_back(path);
  if (kind == io::ResultKind::kSearch) files.searches.push_back(path);
}

void search_folder(const std::string& folder, ResultFiles& files) {
  ResultFiles found;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file() || it->path().extension() != ".h5" || checkpoint_name(it->path())) {
      continue;
    }
    try {
      add(found, io::result_kind(it->path().string()), it->path().string());
    } catch (const core::IoError&) {
      // not HDF5, or unreadable: a folder may hold anything
    }
  }
  if (error) throw core::IoError("cannot read the folder " + folder + ": " + error.message());
  for (auto* list : {&found.runs, &found.benchmarks, &found.searches}) {
    std::sort(list->begin(), list->end());
  }
  // a search's trials are in its leaderboard: their run files are not listed again
  for (const auto& search : found.searches) {
    found.runs.erase(
        std::remove_if(found.runs.begin(), found.runs.end(),
                       [&](const std::string& run) { return is_trial_of(run, search); }),
        found.runs.end());
  }
  for (const auto& path : found.runs) add(files, io::ResultKind::kRun, path);
  for (const auto& path : found.benchmarks) add(files, io::ResultKind::kBenchmark, path);
  for (const auto& path : found.searches) add(files, io::ResultKind::kSearch, path);
}

Table benchmark_points(const std::vector<std::string>& paths) {
  std::vector<io::BenchContents> files;
  for (const auto& path : paths) files.push_back(io::BenchFile::read_all(path));
  return bench_points(files);
}

// The charts of the selected rows: the runs still in the comparison, in its order, and the
// benchmark points still listed.
void figure_of(const std::vector<io::RunFile>& runs, const ResultFiles& files, const Report& report,
               const ReportRequest& request, Figure& figure) {
  std::vector<std::string> shown;
  const auto table_named = [&](const std::string& name) -> const Table* {
    for (const auto& t : report.tables) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  if (const Table* found = table_named("runs")) {
    const Table& runs_table = *found;
    const auto path_column = static_cast<size_t>(runs_table.column("run"));
    std::vector<io::RunFile> selected;
    for (const auto& row : runs_table.rows) {
      for (const auto& run : runs) {
        if (run.path == cell_text(row[path_column])) selected.push_back(run);
      }
    }
    const auto charts = run_charts(selected);
    figure.charts.insert(figure.charts.end(), charts.begin(), charts.end());
    std::set<std::string> names;
    for (const auto& run : selected) names.insert(run.text("name"));
    shown.push_back(names.size() == 1 ? *names.begin() + ": " + runs_table.title
                                      : runs_table.title);
  }
  if (const Table* found = table_named("points")) {
    const Table& points = *found;
    Pivot pivot = request.pivot.value_or(Pivot{});
    std::vector<std::string> measures;
    for (const auto& value :
         request.values.empty() ? std::vector<std::string>{pivot.value} : request.values) {
      pivot.value = value;
      const auto charts = bench_charts(points, pivot, request.choose_x);
      figure.charts.insert(figure.charts.end(), charts.begin(), charts.end());
      if (!charts.empty()) {
        measures.push_back(charts.front().y_label + " against " + charts.front().x_label);
      }
    }
    shown.push_back(points.title);
    if (!measures.empty()) shown.back() = core::join(measures, "; ") + ", " + shown.back();
  }
  if (figure.title.empty()) figure.title = core::join(shown, "; ");
}

// The points table replaced by its pivot, one table for each value asked for.
void pivot_points(Report& report, const ReportRequest& request) {
  const auto points = std::find_if(report.tables.begin(), report.tables.end(),
                                   [](const Table& t) { return t.name == "points"; });
  if (points == report.tables.end()) return;
  const std::vector<std::string> values =
      request.values.empty() ? std::vector<std::string>{request.pivot->value} : request.values;
  if (values.size() > 1 && request.format == Format::kCsv) {
    throw core::UsageError("--value " + core::join(values, ",") +
                           " makes a table each, and CSV holds one: give one --value, or use "
                           "--format json, markdown or text");
  }
  std::vector<Table> pivots;
  for (const auto& value : values) {
    Pivot one = *request.pivot;
    one.value = value;
    pivots.push_back(pivot(*points, one));
    if (values.size() > 1) pivots.back().name = "pivot_" + value;
  }
  const auto at = report.tables.erase(points);
  report.tables.insert(at, pivots.begin(), pivots.end());
}

// What makes search files one search: the shards of one job array (shards > 1) agree on the
// name, seed, searcher, overrides and script; any other file is a search of its own.
std::string search_identity(const io::SearchContents& search, size_t index) {
  const auto text = [&](const std::string& name) {
    const auto it = search.attributes.find(name);
    return it == search.attributes.end() ? std::string() : cell_text(cell_of(it->second));
  };
  const std::string shards = text("shards");
  if (shards.empty() || shards == "1") return "file " + std::to_string(index);
  std::string key = "shards " + shards;
  for (const auto& [name, value] : search.attributes) {
    if (name == "name" || name == "seed" || name == "overrides" || name.rfind("searcher.", 0) == 0)
      key += "\n" + name + "=" + cell_text(cell_of(value));
  }
  return key + "\n" + search.script_text;
}

bool is_evaluation(const io::RunFile& run) {
  return run.text("command").rfind("engine eval", 0) == 0;
}

// --compare BEFORE AFTER: two benchmark files point by point.
Report compare_report(const ReportRequest& request) {
  if (request.inputs.size() != 2) {
    throw core::UsageError("--compare takes two benchmark files, BEFORE.h5 AFTER.h5 (got " +
                           std::to_string(request.inputs.size()) + ")");
  }
  for (const auto& input : request.inputs) {
    const auto kind = io::result_kind(input);
    if (kind != io::ResultKind::kBenchmark) {
      throw core::UsageError("--compare takes two benchmark files; " + input + " is " +
                             io::kind_name(kind));
    }
  }
  Report report;
  report.tables.push_back(compare_benchmarks(io::BenchFile::read_all(request.inputs[0]),
                                             io::BenchFile::read_all(request.inputs[1])));
  select_rows({&report.tables.front()}, request.selection);
  return report;
}

// An evaluation's row says what it evaluated: the run and the checkpoint (its file name and
// step), after its status. An evaluation written before these were recorded has empty cells.
void name_evaluated(const std::vector<io::RunFile>& evaluations, Table& t) {
  std::map<std::string, const io::RunFile*> by_path;
  for (const auto& run : evaluations) by_path[run.path] = &run;
  const int status = t.column("status");
  if (status < 0) return;
  const auto at = static_cast<size_t>(status) + 1;
  t.columns.insert(t.columns.begin() + static_cast<std::ptrdiff_t>(at),
                   {"evaluated run", "checkpoint", "checkpoint step"});
  for (auto& row : t.rows) {
    const auto* path = std::get_if<std::string>(&row.front());
    const auto found = path ? by_path.find(*path) : by_path.end();
    std::vector<Cell> cells(3);
    if (found != by_path.end()) {
      const auto& run = *found->second;
      if (!run.text("evaluated_run").empty()) cells[0] = run.text("evaluated_run");
      if (!run.text("checkpoint").empty()) {
        cells[1] = std::filesystem::path(run.text("checkpoint")).filename().string();
      }
      const auto step = run.attributes.find("checkpoint_step");
      if (step != run.attributes.end()) {
        if (const auto* n = std::get_if<int64_t>(&step->second)) cells[2] = *n;
      }
    }
    row.insert(row.begin() + static_cast<std::ptrdiff_t>(at), cells.begin(), cells.end());
  }
}

// The runs' comparison; engine eval's files are not training runs: a table of their own,
// never ranked with them. Returns the training runs.
std::vector<io::RunFile> add_run_tables(const std::vector<io::RunFile>& runs, int64_t last,
                                        Report& report) {
  std::vector<io::RunFile> training, evaluations;
  for (const auto& run : runs) (is_evaluation(run) ? evaluations : training).push_back(run);
  if (!training.empty()) report.tables.push_back(compare_runs(training, last));
  if (!evaluations.empty()) {
    Table t = compare_runs(evaluations, last);
    name_evaluated(evaluations, t);
    t.name = "evaluations";
    t.title = "engine eval: " + t.title;
    report.tables.push_back(std::move(t));
  }
  return training;
}

// One leaderboard per search: the shards of one job array together, two searches never.
void add_leaderboards(const std::vector<io::SearchContents>& searches, Report& report) {
  const auto groups = search_groups(searches);
  for (size_t g = 0; g < groups.size(); ++g) {
    report.tables.push_back(leaderboard(groups[g]));
    if (groups.size() > 1) {
      report.tables.back().name = "trials_" + std::to_string(g + 1);
      if (groups[g].size() == 1) report.tables.back().title += " (" + groups[g][0].path + ")";
    }
    Table importance = importance_table(groups[g]);
    if (importance.columns.empty()) continue;  // nothing searched
    if (groups.size() > 1) importance.name += "_" + std::to_string(g + 1);
    report.tables.push_back(std::move(importance));
  }
}

}  // namespace

std::vector<std::vector<io::SearchContents>> search_groups(
    const std::vector<io::SearchContents>& searches) {
  std::vector<std::vector<io::SearchContents>> groups;
  std::vector<std::string> keys;
  for (size_t i = 0; i < searches.size(); ++i) {
    const std::string key = search_identity(searches[i], i);
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (at == keys.end()) {
      keys.push_back(key);
      groups.push_back({searches[i]});
    } else {
      groups[static_cast<size_t>(at - keys.begin())].push_back(searches[i]);
    }
  }
  return groups;
}

bool is_trial_of(const std::string& run_path, const std::string& search_path) {
  const std::string trials = io::SearchFile::trials_folder(search_path) + "/";
  return run_path.compare(0, trials.size(), trials) == 0;
}

Report result_tables(const ResultContents& contents) {
  Report report;
  for (const auto& run : contents.runs) declare_directions(run);
  if (!contents.runs.empty()) add_run_tables(contents.runs, 0, report);
  if (!contents.benchmarks.empty()) report.tables.push_back(bench_points(contents.benchmarks));
  add_leaderboards(contents.searches, report);
  return report;
}

ResultFiles result_files(const std::vector<std::string>& inputs) {
  if (inputs.empty()) {
    throw core::UsageError(
        "engine report needs run or benchmark files, or folders (engine report runs/)");
  }
  ResultFiles files;
  for (const auto& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      search_folder(input, files);
      continue;
    }
    const auto kind = io::result_kind(input);  // IoError for a missing or non-HDF5 file
    if (kind != io::ResultKind::kRun && kind != io::ResultKind::kBenchmark &&
        kind != io::ResultKind::kSearch) {
      throw core::UsageError(input + " is " + io::kind_name(kind) +
                             ": engine report reads run files (runs/<name>/<time>.h5), "
                             "benchmark files (runs/bench/<sweep>/<time>.h5) and search files "
                             "(runs/search/<name>/<time>.h5)");
    }
    add(files, kind, input);
  }
  // a file named twice (a folder and a file in it) is read once: its first listing kept
  std::set<std::string> seen;
  for (auto* list : {&files.runs, &files.benchmarks, &files.searches}) {
    std::vector<std::string> kept;
    for (auto& path : *list) {
      std::error_code error;
      const auto canonical = fs::weakly_canonical(path, error);
      if (seen.insert(error ? path : canonical.string()).second) kept.push_back(std::move(path));
    }
    *list = std::move(kept);
  }
  return files;
}

Report make_report(const ReportRequest& request, Figure* figure) {
  if (request.compare) {
    if (figure) {
      throw core::UsageError(
          "--compare makes a table only; plot each file (engine report FILE --plot F.svg)");
    }
    return compare_report(request);
  }
  const auto files = result_files(request.inputs);
  if (files.runs.empty() && files.benchmarks.empty() && files.searches.empty()) {
    throw core::UsageError("no run, benchmark or search files under " +
                           core::join(request.inputs, ", "));
  }
  std::vector<io::SearchContents> searches;
  for (const auto& path : files.searches) searches.push_back(io::read_search_file(path));
  Report report;
  std::vector<io::RunFile> runs;
  if (!files.runs.empty()) {
    for (const auto& path : files.runs) {
      runs.push_back(io::read_run_file(path));
      declare_directions(runs.back());
    }
    const bool one_file = runs.size() == 1 && files.benchmarks.empty() && searches.empty() &&
                          request.inputs.size() == 1 && !fs::is_directory(request.inputs.front());
    if (one_file) {
      const bool charts = request.format == Format::kText || request.format == Format::kMarkdown;
      if (figure) {
        figure->title = runs.front().text("name") + ": " + runs.front().path;
        figure->charts = run_charts(runs);
      }
      return run_report(runs.front(), charts);
    }
    runs = add_run_tables(runs, request.selection.last, report);
  }
  if (!files.benchmarks.empty()) report.tables.push_back(benchmark_points(files.benchmarks));
  add_leaderboards(searches, report);
  std::vector<Table*> tables;
  for (auto& t : report.tables) tables.push_back(&t);
  Selection selection = request.selection;
  if (request.pivot) selection.sort.clear();  // the pivot orders its own rows
  select_rows(tables, selection);
  if (figure) {
    figure_of(runs, files, report, request, *figure);
    const auto charts = search_charts(searches);
    figure->charts.insert(figure->charts.end(), charts.begin(), charts.end());
    if (figure->title.empty() && !searches.empty()) figure->title = report.tables.back().title;
  }
  if (request.pivot) {
    if (files.benchmarks.empty()) {
      throw core::UsageError("--rows, --cols and --value pivot benchmark files; " +
                             core::join(request.inputs, ", ") + " holds none");
    }
    pivot_points(report, request);
  }
  return report;
}

}  // namespace engine::report
