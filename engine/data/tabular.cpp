#include "engine/data/tabular.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/log.hpp"

namespace engine::data {
namespace {

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  // the tensors are float32: a finite value beyond its range is not a number they can hold
  if (std::isfinite(v) && std::abs(v) > std::numeric_limits<float>::max()) return std::nullopt;
  return v;
}

// Why a numeric field cannot be a value: `parsed` is what parse_number made of it. An infinity
// or a NaN parses (strtod takes inf, Infinity, nan(...) in any case) but would train into a NaN
// loss, or pass for a missing value that missing = 'error' should have stopped.
std::string not_a_value(const std::string& field, const std::optional<double>& parsed) {
  if (!parsed) return "'" + field + "' is not a number (or beyond float32's range)";
  return "'" + field + "' is not a finite number (a missing value is one of data.csv's na " +
         "markers: 'NaN', 'NA', '' and others)";
}

// A standardised value as float32; beyond its range (a column whose training values hardly
// vary) it is the largest float32 of its sign, where a plain cast would be undefined.
float to_float32(double v) {
  constexpr double kMost = std::numeric_limits<float>::max();
  return static_cast<float>(std::isnan(v) ? v : std::clamp(v, -kMost, kMost));
}

// A row problem: which row, what is wrong. Thrown as DataError, or skipped with skip_bad.
struct BadRow {
  std::string message;
};

class Table {
 public:
  explicit Table(const CsvOptions& o) : options_(o) {
    auto rows = read_csv(o.path, o.delimiter);
    if (rows.empty()) throw core::DataError(o.path + ": empty CSV file");
    if (o.header) {
      names_ = rows.front().fields;
      rows.erase(rows.begin());
    } else {
      for (size_t i = 1; i <= rows.front().fields.size(); ++i) names_.push_back(std::to_string(i));
    }
    for (auto& row : rows) {
      if (row.fields.size() != names_.size()) {
        reject(row, std::to_string(row.fields.size()) + " fields, expected " +
                        std::to_string(names_.size()) +
                        (o.header ? " (as the header)" : " (as the first row)"));
        continue;
      }
      rows_.push_back(std::move(row));
    }
    if (rows_.empty() && skipped_ == 0) throw core::DataError(o.path + ": no data rows");
  }

  size_t column(const std::string& name, const char* role) const {
    const auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) {
      std::string known;
      for (const auto& n : names_) known += (known.empty() ? "" : ", ") + n;
      throw core::DataError(options_.path + ": no column '" + name + "' (" + role +
                            "); the columns are: " + known);
    }
    return static_cast<size_t>(it - names_.begin());
  }

  bool missing(const std::string& field) const {
    return std::find(options_.na.begin(), options_.na.end(), field) != options_.na.end();
  }

  // Throws, or counts and logs when skipping bad rows.
  void reject(const CsvRow& row, const std::string& why) {
    const std::string message = options_.path + ":" + std::to_string(row.line) + ": " + why;
    if (!options_.skip_bad) throw core::DataError(message);
    core::log::warn("skipping a bad record: {}", message);
    ++skipped_;
  }

  const std::vector<std::string>& names() const { return names_; }
  std::vector<CsvRow>& rows() { return rows_; }
  int64_t skipped() const { return skipped_; }
  void count_skip() { ++skipped_; }

 private:
  const CsvOptions& options_;
  std::vector<std::string> names_;
  std::vector<CsvRow> rows_;
  int64_t skipped_ = 0;
};

bool all_numbers(const std::vector<std::string>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](const std::string& v) { return parse_number(v).has_value(); });
}

// Sorted distinct values; in numeric order when they are all numbers ("2" before "10").
std::vector<std::string> vocabulary(std::set<std::string> distinct) {
  std::vector<std::string> out(distinct.begin(), distinct.end());
  if (all_numbers(out)) {
    std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      return *parse_number(a) < *parse_number(b);
    });
  }
  return out;
}

// Column roles for a training split: the declared ones, or every non-target column, numeric
// when all its present values are numbers.
void choose_columns(const CsvOptions& o, Table& table, TabularStats& stats) {
  std::vector<std::string> numeric, categorical;
  if (o.numeric || o.categorical) {
    numeric = o.numeric.value_or(std::vector<std::string>{});
    categorical = o.categorical.value_or(std::vector<std::string>{});
  } else {
    for (size_t c = 0; c < table.names().size(); ++c) {
      if (table.names()[c] == o.target) continue;
      bool numbers = true;
      for (const auto& row : table.rows()) {
        const auto& f = row.fields[c];
        if (!table.missing(f) && !parse_number(f)) {
          numbers = false;
          break;
        }
      }
      (numbers ? numeric : categorical).push_back(table.names()[c]);
    }
  }
  for (const auto& n : numeric) stats.numeric.push_back({n, 0, 1});
  for (const auto& n : categorical) stats.categorical.push_back({n, {}});
  stats.target = o.target;
  stats.class_target = o.class_target;
}

// Where a split's columns are in its table.
struct CsvColumns {
  std::vector<size_t> numeric, categorical;
  bool has_target = false;
  size_t target = 0;
};

CsvColumns find_columns(const Table& table, const TabularStats& stats) {
  CsvColumns c;
  for (const auto& n : stats.numeric) c.numeric.push_back(table.column(n.name, "numeric"));
  for (const auto& n : stats.categorical) {
    c.categorical.push_back(table.column(n.name, "categorical"));
  }
  c.has_target = !stats.target.empty();
  if (c.has_target) c.target = table.column(stats.target, "target");
  return c;
}

// One row's values, checked: numbers parsed, categories and the target pointed at.
struct ParsedRow {
  std::vector<double> numeric;                  // NaN where missing
  std::vector<const std::string*> categorical;  // null where missing
  const std::string* target = nullptr;
  double target_value = 0;
};

// The row parsed; nullopt for a row left out (rejected as bad, or skipped as incomplete, which
// the table counts). Throws DataError for an incomplete row under missing = 'error'.
std::optional<ParsedRow> parse_row(const CsvOptions& o, Table& table, const CsvRow& row,
                                   const CsvColumns& cols, const TabularStats& stats) {
  ParsedRow p;
  bool bad = false, incomplete = false;
  std::string why;
  for (size_t j = 0; j < cols.numeric.size() && !bad; ++j) {
    const auto& f = row.fields[cols.numeric[j]];
    if (table.missing(f)) {
      if (!incomplete) why = "column '" + stats.numeric[j].name + "' is missing";
      incomplete = true;
      p.numeric.push_back(std::nan(""));
    } else if (auto v = parse_number(f); v && std::isfinite(*v)) {
      p.numeric.push_back(*v);
    } else {
      bad = true;
      why = "column '" + stats.numeric[j].name + "': " + not_a_value(f, v);
    }
  }
  for (size_t j = 0; j < cols.categorical.size() && !bad; ++j) {
    const auto& f = row.fields[cols.categorical[j]];
    if (table.missing(f)) {
      if (!incomplete) why = "column '" + stats.categorical[j].name + "' is missing";
      incomplete = true;
    }
    p.categorical.push_back(table.missing(f) ? nullptr : &f);
  }
  if (cols.has_target && !bad) {
    const auto& f = row.fields[cols.target];
    if (table.missing(f)) {
      // a missing target cannot be filled in
      if (o.missing == MissingValues::kSkip) {
        table.count_skip();
        return std::nullopt;
      }
      bad = true;
      why = "the target '" + stats.target + "' is missing";
    } else if (!stats.class_target) {
      auto v = parse_number(f);
      if (!v || !std::isfinite(*v)) {
        bad = true;
        why = "the target '" + stats.target + "': " + not_a_value(f, v);
      } else {
        p.target_value = *v;
      }
    }
    p.target = &f;
  }
  if (bad) {
    table.reject(row, why);
    return std::nullopt;
  }
  if (incomplete) {
    if (o.missing == MissingValues::kError) {
      throw core::DataError(o.path + ":" + std::to_string(row.line) + ": " + why +
                            " (data.csv's option missing = 'fill' or 'skip' handles this)");
    }
    if (o.missing == MissingValues::kSkip) {
      table.count_skip();
      return std::nullopt;
    }
  }
  return p;
}

// What the training split learns: each numeric column's mean and standard deviation, each
// categorical column's vocabulary, the classes of a class target.
void learn_statistics(const std::vector<ParsedRow>& parsed, const CsvColumns& cols,
                      TabularStats& stats) {
  for (size_t j = 0; j < cols.numeric.size(); ++j) {
    double sum = 0, sq = 0;
    int64_t count = 0;
    for (const auto& p : parsed) {
      if (std::isnan(p.numeric[j])) continue;
      sum += p.numeric[j];
      ++count;
    }
    const double mean = count ? sum / static_cast<double>(count) : 0;
    for (const auto& p : parsed) {
      if (!std::isnan(p.numeric[j])) sq += (p.numeric[j] - mean) * (p.numeric[j] - mean);
    }
    // population standard deviation, as scikit-learn's StandardScaler; a constant column
    // keeps a scale of 1
    const double sd = count ? std::sqrt(sq / static_cast<double>(count)) : 0;
    stats.numeric[j].mean = mean;
    stats.numeric[j].std = sd > 0 ? sd : 1;
  }
  for (size_t j = 0; j < cols.categorical.size(); ++j) {
    std::set<std::string> distinct;
    for (const auto& p : parsed) {
      if (p.categorical[j]) distinct.insert(*p.categorical[j]);
    }
    stats.categorical[j].values = vocabulary(std::move(distinct));
  }
  if (cols.has_target && stats.class_target) {
    std::set<std::string> distinct;
    for (const auto& p : parsed) distinct.insert(*p.target);
    stats.classes = vocabulary(std::move(distinct));
  }
}

std::map<std::string, int64_t> positions_of(const std::vector<std::string>& values) {
  std::map<std::string, int64_t> index;
  for (size_t k = 0; k < values.size(); ++k) index[values[k]] = static_cast<int64_t>(k);
  return index;
}

// Second pass: the tensors, standardised and indexed with what the training split learnt.
struct CsvTensors {
  torch::Tensor input, categorical, target;
};

CsvTensors make_tensors(const std::vector<ParsedRow>& parsed, const CsvColumns& cols,
                        const TabularStats& stats, const std::string& path) {
  CsvTensors t;
  const auto n = static_cast<int64_t>(parsed.size());
  t.input = torch::empty({n, static_cast<int64_t>(cols.numeric.size())}, torch::kFloat32);
  t.categorical = torch::empty({n, static_cast<int64_t>(cols.categorical.size())}, torch::kInt64);
  auto in = t.input.accessor<float, 2>();
  auto cat = t.categorical.accessor<int64_t, 2>();
  std::vector<std::map<std::string, int64_t>> index;
  for (const auto& c : stats.categorical) index.push_back(positions_of(c.values));
  const auto class_index = positions_of(stats.classes);
  if (cols.has_target) {
    t.target =
        stats.class_target ? torch::empty({n}, torch::kInt64) : torch::empty({n}, torch::kFloat32);
  }
  for (int64_t i = 0; i < n; ++i) {
    const auto& p = parsed[static_cast<size_t>(i)];
    for (size_t j = 0; j < cols.numeric.size(); ++j) {
      const auto& s = stats.numeric[j];
      // a missing value (kFill) becomes the training mean: 0 once standardised
      in[i][static_cast<int64_t>(j)] =
          std::isnan(p.numeric[j]) ? 0.0f : to_float32((p.numeric[j] - s.mean) / s.std);
    }
    for (size_t j = 0; j < cols.categorical.size(); ++j) {
      const auto oov = static_cast<int64_t>(stats.categorical[j].values.size());
      int64_t k = oov;
      if (p.categorical[j]) {
        const auto it = index[j].find(*p.categorical[j]);
        if (it != index[j].end()) k = it->second;
      }
      cat[i][static_cast<int64_t>(j)] = k;
    }
    if (!cols.has_target) continue;
    if (!stats.class_target) {
      t.target[i] = p.target_value;
      continue;
    }
    const auto it = class_index.find(*p.target);
    if (it == class_index.end()) {
      throw core::DataError(path + ": class '" + *p.target + "' of the target '" + stats.target +
                            "' is not among the training split's " +
                            std::to_string(stats.classes.size()) + " classes");
    }
    t.target[i] = it->second;
  }
  return t;
}

}  // namespace

CsvSource::CsvSource(const CsvOptions& o) : path_(o.path), options_(o) {
  Table table(o);
  auto stats = std::make_shared<TabularStats>();
  const bool training = !o.stats;
  if (training) {
    choose_columns(o, table, *stats);
  } else {
    *stats = *o.stats;
  }
  const CsvColumns cols = find_columns(table, *stats);
  // First pass: check every row, parse numbers, collect what the training split learns.
  std::vector<ParsedRow> parsed;
  parsed.reserve(table.rows().size());
  for (const auto& row : table.rows()) {
    if (auto p = parse_row(o, table, row, cols, *stats)) parsed.push_back(std::move(*p));
  }
  skipped_rows_ = table.skipped();
  if (parsed.empty())
    throw core::DataError(o.path + ": no usable rows (all were bad or incomplete)");
  if (training) learn_statistics(parsed, cols, *stats);
  auto tensors = make_tensors(parsed, cols, *stats, o.path);
  input_ = std::move(tensors.input);
  categorical_ = std::move(tensors.categorical);
  target_ = std::move(tensors.target);
  stats_ = std::move(stats);
}

Batch CsvSource::gather(const torch::Tensor& indices) const {
  Batch batch;
  batch.input = input_.index_select(0, indices);
  batch.categorical = categorical_.index_select(0, indices);
  if (target_.defined()) batch.target = target_.index_select(0, indices);
  return batch;
}

std::string CsvSource::describe() const {
  return "csv(" + path_ + ", " + std::to_string(size()) + " rows, " +
         std::to_string(stats_->numeric.size()) + " numeric, " +
         std::to_string(stats_->categorical.size()) + " categorical)";
}

}  // namespace engine::data
