#include "engine/report/table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/core/errors.hpp"

namespace engine::report {
namespace {

// Display width of UTF-8 text: code points, not bytes (sparklines and names are UTF-8).
size_t width_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool numeric(const Cell& cell) {
  return std::holds_alternative<int64_t>(cell) || std::holds_alternative<double>(cell);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdown_field(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string csv_value(const Cell& cell) {
  if (const auto* d = std::get_if<double>(&cell)) {
    if (std::isnan(*d)) return "";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", *d);  // every digit: CSV is for machines
    return buffer;
  }
  return csv_field(cell_text(cell));
}

std::string render_text(const Table& table) {
  const size_t n = table.columns.size();
  std::vector<size_t> widths(n);
  std::vector<bool> numbers(n, false), words(n, false);  // right-align columns of numbers
  for (size_t c = 0; c < n; ++c) widths[c] = width_of(table.columns[c]);
  std::vector<std::vector<std::string>> texts;
  for (const auto& row : table.rows) {
    auto& line = texts.emplace_back();
    for (size_t c = 0; c < n; ++c) {
      line.push_back(c < row.size() ? cell_text(row[c]) : "");
      widths[c] = std::max(widths[c], width_of(line.back()));
      if (c < row.size()) {
        numbers[c] = numbers[c] || numeric(row[c]);
        words[c] = words[c] || std::holds_alternative<std::string>(row[c]);
      }
    }
  }
  std::ostringstream out;
  if (!table.title.empty()) out << table.title << "\n";
  const auto emit = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < n; ++c) {
      const std::string fill(widths[c] - std::min(widths[c], width_of(line[c])), ' ');
      const bool right = numbers[c] && !words[c];
      text += (c ? "  " : "") + (right ? fill + line[c] : line[c] + fill);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  emit(table.columns);
  for (const auto& line : texts) emit(line);
  return out.str();
}

std::string render_markdown(const Table& table) {
  std::ostringstream out;
  if (!table.title.empty()) out << "**" << markdown_field(table.title) << "**\n\n";
  out << "|";
  for (const auto& c : table.columns) out << " " << markdown_field(c) << " |";
  out << "\n|";
  for (size_t c = 0; c < table.columns.size(); ++c) out << " --- |";
  out << "\n";
  for (const auto& row : table.rows) {
    out << "|";
    for (size_t c = 0; c < table.columns.size(); ++c) {
      out << " " << (c < row.size() ? markdown_field(cell_text(row[c])) : "") << " |";
    }
    out << "\n";
  }
  return out.str();
}

std::string render_csv(const Table& table) {
  std::ostringstream out;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    out << (c ? "," : "") << csv_field(table.columns[c]);
  }
  out << "\n";
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      out << (c ? "," : "") << (c < row.size() ? csv_value(row[c]) : "");
    }
    out << "\n";
  }
  return out.str();
}

using Json = nlohmann::ordered_json;  // members in the table's column order

Json json_value(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) {
    return std::isfinite(*d) ? Json(*d) : Json(nullptr);
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return nullptr;
}

Json json_records(const Table& table) {
  auto records = Json::array();
  for (const auto& row : table.rows) {
    Json object = Json::object();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      object[table.columns[c]] = c < row.size() ? json_value(row[c]) : nullptr;
    }
    records.push_back(std::move(object));
  }
  return records;
}

}  // namespace

int Table::column(const std::string& wanted) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == wanted) return static_cast<int>(c);
  }
  return -1;
}

Format parse_format(const std::string& name) {
  if (name == "text") return Format::kText;
  if (name == "csv") return Format::kCsv;
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "json") return Format::kJson;
  throw core::UsageError("--format must be text, csv, markdown, json or dlbs, got '" + name + "'");
}

std::string hparam_column(const std::string& name, const std::vector<std::string>& taken) {
  const bool clash = std::find(taken.begin(), taken.end(), name) != taken.end();
  return clash ? "hp." + name : name;
}

std::string number_text(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const double magnitude = std::fabs(value);
  if (value == std::floor(value) && magnitude < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else if (magnitude >= 1e-3 && magnitude < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3e", value);
  }
  return buffer;
}

std::string cell_text(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) return number_text(*d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

std::string render(const Table& table, Format format) {
  switch (format) {
    case Format::kText:
      return render_text(table);
    case Format::kCsv:
      return render_csv(table);
    case Format::kMarkdown:
      return render_markdown(table);
    case Format::kJson:
      break;
  }
  return json_records(table).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render(const Report& report, Format format) {
  const auto& tables = report.tables;
  if (tables.empty()) return "";
  if (format == Format::kCsv) return render_csv(tables.at(report.main));
  if (format == Format::kJson) {
    if (tables.size() == 1) return render(tables.front(), format);
    Json object;
    for (const auto& t : tables) object[t.name] = json_records(t);
    return object.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) out += (i ? "\n" : "") + render(tables[i], format);
  return out;
}

}  // namespace engine::report
