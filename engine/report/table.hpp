// The tables every report is made of, and their four renderings: aligned text for the
// terminal, CSV and JSON (records) that pandas reads as they are, and Markdown.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace engine::report {

// An empty cell, a count, a measured number or a word.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

struct Table {
  std::string name;  // the key of this table in a JSON object of several
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;

  // The index of a column, or -1.
  int column(const std::string& name) const;
};

// What one `engine report` prints: its tables, one of them the main one (what CSV holds).
struct Report {
  std::vector<Table> tables;
  size_t main = 0;
};

enum class Format { kText, kCsv, kMarkdown, kJson };

// text | csv | markdown | json; a UsageError otherwise.
Format parse_format(const std::string& name);

// A number as a person reads it: 4 significant digits, no exponent for ordinary sizes.
std::string number_text(double value);
// A hyperparameter's column beside a table's own columns (`taken`): its name, or "hp." and its
// name where one of them already has that name (a hyperparameter called steps beside the runs'
// steps), so that neither hides the other in text, CSV or JSON.
std::string hparam_column(const std::string& name, const std::vector<std::string>& taken);
std::string cell_text(const Cell& cell);

// One table. Text and Markdown start with the title; CSV and JSON are the bare rows (JSON: an
// array of objects, numbers as numbers, empty cells as null).
std::string render(const Table& table, Format format);
// A report: text and Markdown every table, one after another; JSON one object with a member
// per table (by name), or the bare records when there is one table; CSV the main table only.
std::string render(const Report& report, Format format);

}  // namespace engine::report
