#include "engine/report/live_json.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/report/bench_report.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/reports.hpp"

namespace engine::report {
namespace {

using nlohmann::json;

json number_json(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}

json cell_json(const Cell& cell) {
  if (const auto* count = std::get_if<int64_t>(&cell)) return *count;
  if (const auto* value = std::get_if<double>(&cell)) return number_json(*value);
  if (const auto* word = std::get_if<std::string>(&cell)) return *word;
  return nullptr;
}

json numbers_json(const std::vector<double>& values) {
  json list = json::array();
  for (double v : values) list.push_back(number_json(v));
  return list;
}

// The columns strictly between `first` and `last` (by name).
std::vector<std::string> columns_between(const Table& t, const std::string& first,
                                         const std::string& last) {
  const int from = t.column(first), to = t.column(last);
  if (from < 0 || to <= from) return {};
  return {t.columns.begin() + from + 1, t.columns.begin() + to};
}

json table_json(const Table& t, const std::string& role) {
  json rows = json::array();
  for (const auto& row : t.rows) {
    json cells = json::array();
    for (const auto& cell : row) cells.push_back(cell_json(cell));
    rows.push_back(std::move(cells));
  }
  return {{"name", t.name},
          {"title", t.title},
          {"columns", t.columns},
          {"rows", std::move(rows)},
          {"role", role}};
}

// The runs' (and evaluations') table: which columns are hyperparameters, which metrics.
json runs_json(const Table& t, const std::string& role) {
  json out = table_json(t, role);
  out["hparams"] = columns_between(t, "started", "steps");
  const int seconds = t.column("seconds");
  out["metrics"] = std::vector<std::string>(t.columns.begin() + seconds + 1, t.columns.end());
  return out;
}

// A leaderboard (search_report.hpp's columns): the metric follows "rung", the searched
// hyperparameters run up to "restarts"; a trial's run file as the folder names it.
json leaderboard_json(Table t, const LiveFolder& folder) {
  const int rung = t.column("rung"), run = t.column("run");
  if (run >= 0) {
    for (auto& row : t.rows) {
      auto& cell = row[static_cast<size_t>(run)];
      if (const auto* path = std::get_if<std::string>(&cell)) cell = folder.relative(*path);
    }
  }
  json out = table_json(t, "leaderboard");
  const std::string metric = rung >= 0 ? t.columns[static_cast<size_t>(rung) + 1] : "";
  out["metric"] = metric;
  out["hparams"] = columns_between(t, metric, "restarts");
  return out;
}

// Each way the benchmark points vary (batch size, threads, ranks) pivoted: throughput against
// it, and for ranks the scaling efficiency too.
void add_pivots(const Table& points, json& tables, json& notes) {
  for (const char* x : {"batch_size", "threads", "world_size"}) {
    const int column = points.column(x);
    if (column < 0) continue;
    std::set<std::string> values;
    for (const auto& row : points.rows) values.insert(cell_text(row[static_cast<size_t>(column)]));
    if (values.size() < 2) continue;
    std::vector<std::string> measures{"throughput"};
    if (std::string(x) == "world_size") measures.push_back("efficiency");
    for (const auto& value : measures) {
      Pivot asked;
      asked.cols = x;
      asked.value = value;
      try {
        const Pivot request = split_shared_cells(points, asked);
        json out = table_json(pivot(points, request), "pivot");
        out["x"] = x;
        out["keys"] = request.rows.size();
        out["value"] = value;
        tables.push_back(std::move(out));
      } catch (const core::Error& e) {
        notes.push_back(std::string("no ") + value + " against " + x + ": " + e.what());
      }
    }
  }
}

// Each trial's searched metric at every step it was measured: the curves ASHA judged (Optuna's
// intermediate values). [{trial, status, points: [[step, value], ...]}], by trial id.
json intermediate_json(const std::vector<io::SearchContents>& group) {
  json trials = json::array();
  if (group.empty()) return trials;
  const auto it = group.front().attributes.find("searcher.metric");
  const std::string metric =
      it == group.front().attributes.end() ? "" : cell_text(cell_of(it->second));
  const auto dot = metric.find('.');
  if (dot == std::string::npos) return trials;
  const std::string split = metric.substr(0, dot), name = metric.substr(dot + 1);
  for (const auto& search : group) {
    for (const auto& trial : search.trials) {
      const auto s = trial.metrics.find(split);
      if (s == trial.metrics.end()) continue;
      const auto series = s->second.series.find(name);
      if (series == s->second.series.end()) continue;
      json points = json::array();
      for (size_t i = 0; i < series->second.size() && i < s->second.step.size(); ++i) {
        if (std::isfinite(series->second[i]))
          points.push_back({s->second.step[i], series->second[i]});
      }
      if (points.empty()) continue;
      trials.push_back({{"trial", trial.id},
                        {"status", core::name_of(trial.status)},
                        {"points", std::move(points)}});
    }
  }
  return trials;
}

json attributes_json(const std::map<std::string, io::h5::Attribute>& attributes) {
  json out = json::object();
  for (const auto& [name, value] : attributes) out[name] = cell_json(cell_of(value));
  return out;
}

std::string dump(const json& document) {
  // a file name need not be UTF-8: such bytes show as U+FFFD, never as an exception
  return document.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string folder_json(LiveFolder& folder) {
  const FolderLook look = folder.look();
  json files = json::array();
  for (const auto& f : look.files) {
    files.push_back({{"path", f.path}, {"kind", f.kind}, {"state", f.state}, {"bytes", f.bytes}});
  }
  json tables = json::array(), notes = json::array();
  const Report report = result_tables({look.runs, look.benchmarks, look.searches});
  const auto searches = search_groups(look.searches);
  size_t boards = 0;
  for (const auto& t : report.tables) {
    if (t.name == "runs" || t.name == "evaluations") {
      tables.push_back(runs_json(t, t.name));
    } else if (t.name == "points") {
      tables.push_back(table_json(t, "points"));
      add_pivots(t, tables, notes);
    } else if (t.name.rfind("importance", 0) == 0) {
      tables.back()["importance"] = table_json(t, "importance");  // its search's, just before
    } else {
      tables.push_back(leaderboard_json(t, folder));
      if (boards < searches.size())
        tables.back()["intermediate"] = intermediate_json(searches[boards]);
      ++boards;
    }
  }
  return dump({{"folder", folder.folder()},
               {"files", std::move(files)},
               {"tables", std::move(tables)},
               {"notes", std::move(notes)}});
}

std::optional<std::string> run_json(LiveFolder& folder, const std::string& path) {
  const auto run = folder.run(path);
  if (!run) return std::nullopt;
  json hparams = json::object();
  for (const auto& [name, value] : run->hparams) hparams[name] = cell_json(cell_of(value));
  json splits = json::object();
  for (const auto& [name, split] : run->metrics) {
    json series = json::object();
    for (const auto& [metric, values] : split.series) series[metric] = numbers_json(values);
    splits[name] = {{"step", split.step},
                    {"epoch", numbers_json(split.epoch)},
                    {"time", numbers_json(split.time)},
                    {"series", std::move(series)}};
  }
  json checkpoints = json::array();
  for (const auto& [file, step] : run->checkpoints) {
    const std::string inside = folder.relative(file);
    checkpoints.push_back({{"path", inside.empty() ? file : inside}, {"step", step}});
  }
  return dump({{"path", run->path},
               {"name", run->text("name")},
               {"status", run->status()},
               {"held", run->held},
               {"attributes", attributes_json(run->attributes)},
               {"hparams", std::move(hparams)},
               {"splits", std::move(splits)},
               {"checkpoints", std::move(checkpoints)},
               {"latest_checkpoint", folder.relative(run->latest_checkpoint)},
               {"script", run->script_text}});
}

}  // namespace engine::report
