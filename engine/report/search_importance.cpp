#include "engine/report/search_importance.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>

#include "engine/core/regex.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/fanova.hpp"

namespace engine::report {
namespace {

// Optuna's FanovaImportanceEvaluator defaults; the seed fixed so that a page read every two
// seconds shows the same figures for the same trials.
constexpr int kTrees = 64;
constexpr int kMaxDepth = 64;
constexpr uint64_t kSeed = 0;

// One searched hyperparameter's columns: a number's bounds, or a choice's values seen.
struct SearchedColumns {
  bool choice = false;
  double low = INFINITY, high = -INFINITY;  // a number's: from its space, widened to the trials'
  std::vector<std::string> choices;         // a choice's, in the order first seen
  int first_column = -1;                    // -1: one value only, left out of the forest
};
using Searched = std::map<std::string, SearchedColumns>;

// search.int(lo, hi...), search.uniform(lo, hi...), search.log(lo, hi...) as space.cpp writes
// them: the bounds; a choice (search.choice{...}) says so; anything else leaves the trials'
// own range.
SearchedColumns columns_of(const std::string& space) {
  static const core::Regex range(R"(^search\.(int|uniform|log)\(\s*([^,\s]+)\s*,\s*([^,\s\)]+))");
  SearchedColumns p;
  if (space.rfind("search.choice", 0) == 0 || space.rfind("search.grid", 0) == 0) {
    p.choice = true;
  } else if (const auto m = range.match_start(space)) {
    char* end = nullptr;
    const double low = std::strtod(m->groups[2].c_str(), &end);
    const double high = std::strtod(m->groups[3].c_str(), &end);
    if (std::isfinite(low) && std::isfinite(high) && low <= high) {
      p.low = low;
      p.high = high;
    }
  }
  return p;
}

std::string searched_metric(const io::SearchContents& s) {
  const auto it = s.attributes.find("searcher.metric");
  return it == s.attributes.end() ? "" : cell_text(cell_of(it->second));
}

// The trials Optuna would take: completed, a finite metric, every searched value of its kind.
std::vector<const io::SearchTrialRecord*> taken_trials(
    const std::vector<io::SearchContents>& searches, const Searched& searched) {
  std::vector<const io::SearchTrialRecord*> trials;
  for (const auto& s : searches) {
    for (const auto& trial : s.trials) {
      if (trial.status != core::TrialStatus::kCompleted || trial.rung_metrics.empty() ||
          !std::isfinite(trial.rung_metrics.back())) {
        continue;
      }
      const bool whole = std::all_of(searched.begin(), searched.end(), [&](const auto& entry) {
        const auto it = trial.hparams.find(entry.first);
        return it != trial.hparams.end() &&
               (entry.second.choice || std::holds_alternative<double>(it->second));
      });
      if (whole) trials.push_back(&trial);
    }
  }
  return trials;
}

// The forest's inputs: a number's column, a choice's one per value seen (one-hot), in name
// order; a range the trials give one value is left out and has importance 0, as in Optuna.
struct Encoding {
  std::vector<Bounds> bounds;
  std::vector<ColumnGroup> groups;
  std::vector<std::string> names;  // of the groups
  std::vector<std::vector<double>> x;
  std::vector<double> y;
};

Encoding encode(const std::vector<const io::SearchTrialRecord*>& trials, Searched& searched) {
  for (const auto* trial : trials) {
    for (auto& [name, p] : searched) {
      const io::HParam& v = trial->hparams.at(name);
      if (!p.choice) {
        p.low = std::min(p.low, std::get<double>(v));
        p.high = std::max(p.high, std::get<double>(v));
      } else if (std::find(p.choices.begin(), p.choices.end(), cell_text(cell_of(v))) ==
                 p.choices.end()) {
        p.choices.push_back(cell_text(cell_of(v)));
      }
    }
  }
  Encoding e;
  for (auto& [name, p] : searched) {
    if (p.choice ? p.choices.empty() : !(p.high > p.low)) continue;
    p.first_column = static_cast<int>(e.bounds.size());
    ColumnGroup group;
    for (size_t c = 0; c < (p.choice ? p.choices.size() : 1); ++c) {
      group.push_back(static_cast<int>(e.bounds.size()));
      e.bounds.push_back(p.choice ? Bounds{0, 1} : Bounds{p.low, p.high});
    }
    e.groups.push_back(group);
    e.names.push_back(name);
  }
  for (const auto* trial : trials) {
    std::vector<double> row(e.bounds.size(), 0);
    for (const auto& name : e.names) {
      const SearchedColumns& p = searched.at(name);
      const io::HParam& v = trial->hparams.at(name);
      if (p.choice) {
        const auto at = std::find(p.choices.begin(), p.choices.end(), cell_text(cell_of(v)));
        row[static_cast<size_t>(p.first_column + (at - p.choices.begin()))] = 1;
      } else {
        row[static_cast<size_t>(p.first_column)] = std::get<double>(v);
      }
    }
    e.x.push_back(std::move(row));
    e.y.push_back(trial->rung_metrics.back());
  }
  return e;
}

// What an importance depends on: the searched metric, the spaces, each trial's status, last
// metric and hyperparameters.
std::string inputs_key(const std::vector<io::SearchContents>& searches) {
  std::string key;
  for (const auto& s : searches) {
    key += searched_metric(s) + '\n';
    for (const auto& [name, space] : s.spaces) key += name + '=' + space + '\n';
    for (const auto& trial : s.trials) {
      key += std::to_string(trial.id) + ' ' + core::name_of(trial.status) + ' ' +
             (trial.rung_metrics.empty() ? std::string("-")
                                         : std::to_string(trial.rung_metrics.back()));
      for (const auto& [name, value] : trial.hparams)
        key += ' ' + name + '=' + cell_text(cell_of(value));
      key += '\n';
    }
  }
  return key;
}

Table compute_importance(const std::vector<io::SearchContents>& searches);

}  // namespace

// The live page asks every two seconds while a search runs: a forest is grown once per set of
// trials (the last few sets kept), not at every read.
Table importance_table(const std::vector<io::SearchContents>& searches) {
  static std::mutex mutex;
  static std::deque<std::pair<std::string, Table>> recent;
  const std::string key = inputs_key(searches);
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, table] : recent) {
      if (k == key) return table;
    }
  }
  Table t = compute_importance(searches);
  std::lock_guard<std::mutex> lock(mutex);
  recent.emplace_back(key, t);
  if (recent.size() > 8) recent.pop_front();
  return t;
}

namespace {

Table compute_importance(const std::vector<io::SearchContents>& searches) {
  Table t{"importance", "", {}, {}};
  Searched searched;
  for (const auto& s : searches) {
    for (const auto& [name, space] : s.spaces) searched.emplace(name, columns_of(space));
  }
  if (searched.empty()) return t;
  t.columns = {"hyperparameter", "importance"};
  const std::string metric = searched_metric(searches.front());
  const auto trials = taken_trials(searches, searched);
  const std::string about = "hyperparameter importance for " + metric +
                            " (fANOVA, as Optuna's default; " + std::to_string(trials.size()) +
                            " completed trial" + (trials.size() == 1 ? "" : "s");
  if (trials.size() < 2) {
    t.title = about + "): none yet, it needs 2 completed trials or more";
    return t;
  }
  const Encoding e = encode(trials, searched);
  const auto shares =
      e.groups.empty()
          ? std::vector<double>{}
          : fanova_importance(grow_forest(e.x, e.y, kTrees, kMaxDepth, kSeed), e.bounds, e.groups);
  if (shares.empty()) {
    t.title = about + "): none, the trials' " + metric + " does not vary with them";
    return t;
  }
  t.title = about + ")";
  std::vector<std::pair<double, std::string>> ranked;
  for (size_t g = 0; g < e.names.size(); ++g) ranked.emplace_back(shares[g], e.names[g]);
  for (const auto& [name, p] : searched) {
    if (p.first_column < 0) ranked.emplace_back(0.0, name);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [share, name] : ranked) t.rows.push_back({name, share});
  return t;
}

}  // namespace

}  // namespace engine::report
