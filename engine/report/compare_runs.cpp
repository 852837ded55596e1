#include "engine/report/compare_runs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/report/cells.hpp"
#include "engine/report/run_summary.hpp"

namespace engine::report {

std::vector<std::string> differing_hparams(const std::vector<io::RunFile>& runs) {
  std::set<std::string> names;
  for (const auto& run : runs) {
    for (const auto& [name, _] : run.hparams) names.insert(name);
  }
  std::vector<std::string> out;
  for (const auto& name : names) {
    std::optional<io::HParam> first;
    bool differs = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto it = runs[i].hparams.find(name);
      if (it == runs[i].hparams.end()) {
        differs = true;
        break;
      }
      if (i == 0) {
        first = it->second;
      } else if (!(it->second == *first)) {
        differs = true;
        break;
      }
    }
    if (differs || runs.size() == 1) out.push_back(name);
  }
  return out;
}

namespace {

struct Condition {
  std::string column, op, value;
};

Condition parse_filter(const std::string& text) {
  static const char* const kOperators[] = {"<=", ">=", "!=", "==", "<", ">", "="};
  size_t best = std::string::npos;
  std::string op;
  for (const char* candidate : kOperators) {
    const size_t at = text.find(candidate);
    if (at != std::string::npos &&
        (at < best || (at == best && std::string(candidate).size() > op.size()))) {
      best = at;
      op = candidate;
    }
  }
  if (best == std::string::npos || best == 0) {
    throw core::UsageError("--filter '" + text +
                           "' is not COLUMN OP VALUE (OP one of = != < <= > >=), e.g. 'lr<0.1'");
  }
  const auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  return {trim(text.substr(0, best)), op == "==" ? "=" : op, trim(text.substr(best + op.size()))};
}

std::optional<double> number_of(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    if (!std::isnan(*d)) return *d;
  }
  return std::nullopt;
}

std::optional<double> number_of(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool holds(const Cell& cell, const Condition& c) {
  const auto x = number_of(cell);
  const auto y = number_of(c.value);
  int order = 0;
  if (x && y) {
    order = *x < *y ? -1 : (*x > *y ? 1 : 0);
  } else {
    const std::string s = cell_text(cell);
    if (std::holds_alternative<std::monostate>(cell)) return c.op == "!=";
    order = s < c.value ? -1 : (s > c.value ? 1 : 0);
  }
  if (c.op == "=") return order == 0;
  if (c.op == "!=") return order != 0;
  if (c.op == "<") return order < 0;
  if (c.op == "<=") return order <= 0;
  if (c.op == ">") return order > 0;
  return order >= 0;
}

// Best first for metric columns ("validation.accuracy", ".best"), ascending for the rest.
bool descending(const std::string& column) {
  const auto dot = column.find('.');
  if (dot == std::string::npos) return false;
  std::string metric = column.substr(dot + 1);
  if (metric.size() > 5 && metric.compare(metric.size() - 5, 5, ".best") == 0) {
    metric.resize(metric.size() - 5);
  }
  return better_of(column.substr(0, dot), metric) == Better::kLarger;
}

}  // namespace

void select_rows(const std::vector<Table*>& tables, const Selection& selection) {
  std::vector<size_t> before;
  for (const Table* t : tables) before.push_back(t->rows.size());
  const auto no_table_has = [&tables](const std::string& column, const std::string& flag) {
    std::string columns;
    for (const Table* t : tables)
      columns += (columns.empty() ? "" : "; ") + core::join(t->columns, ", ");
    throw core::UsageError(flag + ": no column '" + column + "' (columns: " + columns + ")");
  };
  for (const auto& text : selection.filters) {
    const auto condition = parse_filter(text);
    bool applied = false;
    for (Table* t : tables) {
      const int c = t->column(condition.column);
      if (c < 0) continue;
      applied = true;
      std::vector<std::vector<Cell>> kept;
      for (auto& row : t->rows) {
        if (holds(row[static_cast<size_t>(c)], condition)) kept.push_back(std::move(row));
      }
      t->rows = std::move(kept);
    }
    if (!applied) no_table_has(condition.column, "--filter '" + text + "'");
  }
  if (!selection.sort.empty()) {
    bool applied = false;
    const bool down = descending(selection.sort);
    for (Table* t : tables) {
      const int column = t->column(selection.sort);
      if (column < 0) continue;
      applied = true;
      const auto c = static_cast<size_t>(column);
      std::stable_sort(t->rows.begin(), t->rows.end(), [&](const auto& a, const auto& b) {
        const auto x = number_of(a[c]), y = number_of(b[c]);
        if (x && y) return down ? *x > *y : *x < *y;
        if (x || y) return bool(x);  // empty cells last
        return cell_text(a[c]) < cell_text(b[c]);
      });
    }
    if (!applied) no_table_has(selection.sort, "--sort");
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    Table& t = *tables[i];
    const std::string total = std::to_string(before[i]);
    if (t.rows.size() != before[i] && t.title.rfind(total + " ", 0) == 0) {
      t.title = std::to_string(t.rows.size()) + " of " + t.title;
    }
  }
}

Table compare_runs(const std::vector<io::RunFile>& all_runs, int64_t last) {
  std::vector<io::RunFile> runs = all_runs;
  std::stable_sort(runs.begin(), runs.end(), [](const io::RunFile& a, const io::RunFile& b) {
    return a.text("started_at") < b.text("started_at");
  });
  if (last > 0 && runs.size() > static_cast<size_t>(last))
    runs.erase(runs.begin(), runs.end() - last);
  const auto hparams = differing_hparams(runs);

  // metric columns in the order of their first appearance, validation first
  std::vector<std::string> metric_columns;
  std::map<std::string, bool> has_best;
  std::vector<std::map<std::string, std::pair<double, double>>> values(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& s : summarize_series(runs[i])) {
      if (s.split == "data") continue;  // the loader's bookkeeping: in the single-run report
      const std::string column = s.split + "." + s.metric;
      if (!has_best.count(column)) metric_columns.push_back(column);
      has_best[column] = has_best[column] || s.better != Better::kNeither;
      values[i][column] = {s.last, s.better == Better::kNeither ? NAN : s.best};
    }
  }
  std::stable_sort(metric_columns.begin(), metric_columns.end(),
                   [](const std::string& a, const std::string& b) {
                     const bool va = a.rfind("validation.", 0) == 0;
                     const bool vb = b.rfind("validation.", 0) == 0;
                     return va && !vb;
                   });

  Table t{"runs", "", {"run", "name", "status", "started"}, {}};
  std::vector<std::string> taken = {"run", "name", "status", "started", "steps", "seconds"};
  for (const auto& m : metric_columns) taken.insert(taken.end(), {m, m + ".best"});
  for (const auto& h : hparams) t.columns.push_back(hparam_column(h, taken));
  t.columns.insert(t.columns.end(), {"steps", "seconds"});
  for (const auto& m : metric_columns) {
    t.columns.push_back(m);
    if (has_best[m]) t.columns.push_back(m + ".best");
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    std::vector<Cell> row{run.path, run.text("name"), run.status(), run.text("started_at")};
    for (const auto& h : hparams) {
      const auto it = run.hparams.find(h);
      row.push_back(it == run.hparams.end() ? Cell{} : cell_of(it->second));
    }
    row.push_back(steps_of(run));
    row.push_back(seconds_of(run));
    for (const auto& m : metric_columns) {
      const auto it = values[i].find(m);
      const bool found = it != values[i].end();
      row.push_back(found ? Cell{it->second.first} : Cell{});
      if (has_best[m]) row.push_back(found ? Cell{it->second.second} : Cell{});
    }
    t.rows.push_back(std::move(row));
  }
  t.title = std::to_string(t.rows.size()) + " run" + (t.rows.size() == 1 ? "" : "s");
  if (runs.size() < all_runs.size()) {
    t.title += " (the most recent of " + std::to_string(all_runs.size()) + ")";
  }
  return t;
}

}  // namespace engine::report
