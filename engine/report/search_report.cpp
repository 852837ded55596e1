#include "engine/report/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/report/cells.hpp"

namespace engine::report {
namespace {

struct Row {
  const io::SearchContents* file;
  const io::SearchTrialRecord* trial;
  double metric;
};

std::string attribute(const io::SearchContents& s, const std::string& name) {
  const auto it = s.attributes.find(name);
  return it == s.attributes.end() ? "" : cell_text(cell_of(it->second));
}

bool smaller_is_better(const io::SearchContents& s) {
  const auto it = s.attributes.find("searcher.smaller_is_better");
  if (it == s.attributes.end()) return true;
  const auto* flag = std::get_if<bool>(&it->second);
  return flag ? *flag : true;
}

std::vector<std::string> searched_names(const std::vector<io::SearchContents>& searches) {
  std::set<std::string> names;
  for (const auto& s : searches) {
    for (const auto& [name, _] : s.spaces) names.insert(name);
  }
  return {names.begin(), names.end()};
}

// The trials in leaderboard order: finished ones best first, then the rest by id.
std::vector<Row> ranked(const std::vector<io::SearchContents>& searches) {
  std::vector<Row> rows;
  for (const auto& s : searches) {
    for (const auto& t : s.trials) {
      rows.push_back({&s, &t, t.rung_metrics.empty() ? NAN : t.rung_metrics.back()});
    }
  }
  const bool smaller = searches.empty() || smaller_is_better(searches.front());
  std::stable_sort(rows.begin(), rows.end(), [smaller](const Row& a, const Row& b) {
    // trials that trained longer first (an early rung's metric is not comparable), then metric
    if (a.trial->rung_metrics.size() != b.trial->rung_metrics.size() && !std::isnan(a.metric) &&
        !std::isnan(b.metric)) {
      return a.trial->rung_metrics.size() > b.trial->rung_metrics.size();
    }
    if (std::isnan(a.metric) != std::isnan(b.metric)) return std::isnan(b.metric);
    if (std::isnan(a.metric)) return a.trial->id < b.trial->id;
    return smaller ? a.metric < b.metric : a.metric > b.metric;
  });
  return rows;
}

}  // namespace

Table leaderboard(const std::vector<io::SearchContents>& searches) {
  const std::string metric =
      searches.empty() ? "metric" : attribute(searches.front(), "searcher.metric");
  const auto names = searched_names(searches);
  Table t{"trials", "", {"rank"}, {}};
  if (searches.size() > 1) t.columns.push_back("file");
  t.columns.insert(t.columns.end(), {"trial", "status", "rung", metric});
  const std::vector<std::string> taken = {"rank", "file",     "trial",  "status", "rung",
                                          metric, "restarts", "reason", "run"};
  for (const auto& name : names) t.columns.push_back(hparam_column(name, taken));
  t.columns.insert(t.columns.end(), {"restarts", "reason", "run"});
  int64_t rank = 0;
  std::map<std::string, int64_t> statuses;
  for (const auto& r : ranked(searches)) {
    std::vector<Cell> row{std::isnan(r.metric) ? Cell{} : Cell{++rank}};
    if (searches.size() > 1) row.push_back(r.file->path);
    row.insert(row.end(), {r.trial->id, std::string(core::name_of(r.trial->status)), r.trial->rung,
                           std::isnan(r.metric) ? Cell{} : Cell{r.metric}});
    for (const auto& name : names) {
      const auto it = r.trial->hparams.find(name);
      row.push_back(it == r.trial->hparams.end() ? Cell{} : cell_of(it->second));
    }
    row.insert(row.end(), {r.trial->restarts, r.trial->reason, r.trial->run_file});
    t.rows.push_back(std::move(row));
    ++statuses[core::name_of(r.trial->status)];
  }
  std::string counts;
  for (const auto& [status, n] : statuses) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  }
  const std::string name = searches.empty() ? "" : attribute(searches.front(), "name");
  const std::string searcher = searches.empty() ? "" : attribute(searches.front(), "searcher.name");
  t.title = "search " + name + " (" + searcher + "): " + std::to_string(t.rows.size()) + " trial" +
            (t.rows.size() == 1 ? "" : "s") + (counts.empty() ? "" : " (" + counts + ")") +
            (searches.size() > 1 ? " in " + std::to_string(searches.size()) + " files" : "");
  return t;
}

std::vector<Chart> search_charts(const std::vector<io::SearchContents>& searches) {
  std::vector<Chart> charts;
  if (searches.empty()) return charts;
  const std::string metric = attribute(searches.front(), "searcher.metric");
  const bool asha = attribute(searches.front(), "searcher.name") == "asha";
  const auto rows = ranked(searches);
  for (const auto& name : searched_names(searches)) {
    // a colour per rung: an early rung's metric is measured after less training
    std::map<size_t, Line> by_rung;
    bool numeric = true;
    for (const auto& r : rows) {
      const auto it = r.trial->hparams.find(name);
      if (it == r.trial->hparams.end() || std::isnan(r.metric)) continue;
      const auto* v = std::get_if<double>(&it->second);
      if (!v) {
        numeric = false;  // a choice of words: no axis for it
        break;
      }
      const size_t rung = r.trial->rung_metrics.size() - 1;
      Line& line = by_rung[rung];
      line.label = asha ? "rung " + std::to_string(rung) : metric;
      line.dots = true;
      line.x.push_back(*v);
      line.y.push_back(r.metric);
    }
    if (!numeric || by_rung.empty()) continue;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& [_, line] : by_rung) {
      lo = std::min(lo, *std::min_element(line.x.begin(), line.x.end()));
      hi = std::max(hi, *std::max_element(line.x.begin(), line.x.end()));
    }
    Chart chart{metric + " against " + name, name, metric, {}, lo > 0 && hi >= 4 * lo, false};
    for (auto& [_, line] : by_rung) chart.lines.push_back(std::move(line));
    charts.push_back(std::move(chart));
  }
  return charts;
}

}  // namespace engine::report
