#include "engine/report/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "engine/core/format.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/run_summary.hpp"
#include "engine/report/sparkline.hpp"

namespace engine::report {
namespace {

Table facts(const io::RunFile& run) {
  Table t{"run", "run", {"field", "value"}, {}};
  const auto add = [&t](const std::string& field, const std::string& value) {
    if (!value.empty()) t.rows.push_back({field, value});
  };
  const auto add_attributes = [&](std::initializer_list<std::pair<const char*, const char*>> list) {
    for (const auto& [field, attribute] : list) add(field, run.text(attribute));
  };
  add("file", run.path);
  add("name", run.text("name"));
  add("description", run.text("description"));
  add("status", run.status());
  add_attributes({{"error", "error"},
                  {"stop reason", "stop_reason"},
                  {"script", "script"},
                  {"command", "command"},
                  {"started", "started_at"},
                  {"finished", "finished_at"},
                  {"resumed", "resumed_at"},
                  {"resumes", "resumes"}});
  add("duration", core::duration_string(seconds_of(run)));
  add("steps", std::to_string(steps_of(run)));
  double epochs = 0;
  for (const auto& [_, split] : run.metrics) {
    for (double e : split.epoch) {
      if (std::isfinite(e)) epochs = std::max(epochs, e);
    }
  }
  add("epochs", number_text(epochs));
  const std::string world = run.text("world_size");
  add("processes", world.empty() || world == "1" ? "" : world);
  add_attributes({{"threads", "threads"},
                  {"device", "device"},
                  {"seed", "seed"},
                  {"host", "hostname"},
                  {"engine", "engine_version"},
                  {"libtorch", "torch_version"}});
  return t;
}

Table hparams(const io::RunFile& run) {
  Table t{"hparams", "hyperparameters", {"name", "value"}, {}};
  for (const auto& [name, value] : run.hparams) t.rows.push_back({name, cell_text(cell_of(value))});
  return t;
}

Table metrics(const io::RunFile& run, bool sparklines) {
  Table t{
      "metrics", "metrics", {"split", "metric", "rows", "last", "step", "best", "best step"}, {}};
  if (sparklines) t.columns.push_back("course");
  for (const auto& s : summarize_series(run)) {
    std::vector<Cell> row{s.split, s.metric, static_cast<int64_t>(s.rows), s.last, s.last_step};
    if (s.better == Better::kNeither || std::isnan(s.best)) {
      row.insert(row.end(), {Cell{}, Cell{}});
    } else {
      row.insert(row.end(), {s.best, s.best_step});
    }
    if (sparklines) row.push_back(sparkline(s.values));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table checkpoints(const io::RunFile& run) {
  Table t{"checkpoints", "checkpoints", {"step", "path", "latest", "best"}, {}};
  std::vector<std::pair<int64_t, std::string>> kept;
  for (const auto& [path, step] : run.checkpoints) kept.emplace_back(step, path);
  std::sort(kept.begin(), kept.end());
  for (const auto& [step, path] : kept) {
    t.rows.push_back({step, path, path == run.latest_checkpoint ? "yes" : "",
                      path == run.best_checkpoint ? "yes" : ""});
  }
  return t;
}

}  // namespace

Report run_report(const io::RunFile& run, bool sparklines) {
  Report report;
  report.tables = {facts(run), hparams(run), metrics(run, sparklines), checkpoints(run)};
  report.main = 2;
  return report;
}

}  // namespace engine::report
